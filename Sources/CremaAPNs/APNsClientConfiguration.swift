public import CremaAPNsProtocol
public import Foundation

/// Where and how ``APNsClient`` connects: Apple's two base URLs (or one compatible server), extra trust roots,
/// and the timing rules for requests and provider tokens (docs/design.md §6, §9).
public struct APNsClientConfiguration: Sendable {
    /// Base URL for production device tokens.
    public var productionURL: URL
    /// Base URL for sandbox (development) device tokens.
    public var sandboxURL: URL
    /// A PEM file of extra trust roots added to the system's (`CREMA_APNS_CA_FILE`): simulators, proxies.
    public var extraTrustRootsPEMFile: String?
    /// How long one send may take, from queueing for a connection to the last byte of the answer.
    public var requestTimeout: Duration
    /// How long opening a connection (TCP and TLS) may take before the send fails as a timeout.
    public var connectTimeout: Duration = .seconds(5)
    /// Whether a failed connection attempt is retried with backoff until `connectTimeout` (on: connecting is flaky
    /// at scale); off, a send fails with the attempt's own error at once.
    public var retriesFailedConnections = true
    /// How long a provider token is reused before a new one is signed (APNs: between 20 and 60 minutes); a key
    /// unused for this long has its token forgotten.
    public var tokenLifetime: Duration

    public static let appleProductionURL = URL(string: "https://api.push.apple.com")!
    public static let appleSandboxURL = URL(string: "https://api.sandbox.push.apple.com")!

    public init(
        productionURL: URL = APNsClientConfiguration.appleProductionURL,
        sandboxURL: URL = APNsClientConfiguration.appleSandboxURL,
        extraTrustRootsPEMFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        tokenLifetime: Duration = .seconds(50 * 60)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.extraTrustRootsPEMFile = extraTrustRootsPEMFile
        self.requestTimeout = requestTimeout
        self.tokenLifetime = tokenLifetime
    }

    /// Everything to one server (CREMA_APNS_URL set: a simulator or proxy).
    public static func singleServer(
        _ url: URL,
        extraTrustRootsPEMFile: String? = nil
    ) -> Self {
        Self(productionURL: url, sandboxURL: url, extraTrustRootsPEMFile: extraTrustRootsPEMFile)
    }

    /// The base URL for tokens of `environment`.
    public func baseURL(for environment: APNsEnvironment) -> URL {
        switch environment {
        case .production: productionURL
        case .sandbox: sandboxURL
        }
    }
}
