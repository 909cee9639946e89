public import CremaAPNsProtocol
public import Foundation

/// Where and how ``APNsClient`` connects: Apple's base URLs per environment for device pushes, broadcasts and
/// channel management (or one compatible server for all), extra trust roots, and the timing rules for requests and
/// provider tokens (docs/design.md §6, §9).
public struct APNsClientConfiguration: Sendable {
    /// Base URL for production device tokens.
    public var productionURL: URL
    /// Base URL for sandbox (development) device tokens.
    public var sandboxURL: URL
    /// Base URL of `POST /4/broadcasts/apps/…` for production channels (`CREMA_APNS_BROADCAST_URL`).
    ///
    /// Apple's default is the device-push host. Apple's broadcast page is ambiguous: its connection section names
    /// `api.push.apple.com:443`, its sample request `api-broadcast.push.apple.com` (docs/apns.md §5.6, §9.1). The
    /// connection section, most other clients and a probe of the host agree on the device host, so that is the
    /// default, and the variable moves it without a release if Apple says otherwise.
    public var broadcastProductionURL: URL
    /// Base URL of `POST /4/broadcasts/apps/…` for sandbox channels; see ``broadcastProductionURL`` for why.
    public var broadcastSandboxURL: URL
    /// Base URL of the channel-management API for production (`CREMA_APNS_CHANNELS_URL`): its own host and port.
    public var channelsProductionURL: URL
    /// Base URL of the channel-management API for sandbox: its own host and port.
    public var channelsSandboxURL: URL
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
    /// Broadcasts go to the device-push hosts (see ``broadcastProductionURL`` for the open question).
    public static let appleBroadcastProductionURL = appleProductionURL
    public static let appleBroadcastSandboxURL = appleSandboxURL
    public static let appleChannelsProductionURL = URL(string: "https://api-manage-broadcast.push.apple.com:2196")!
    public static let appleChannelsSandboxURL = URL(string: "https://api-manage-broadcast.sandbox.push.apple.com:2195")!

    public init(
        productionURL: URL = APNsClientConfiguration.appleProductionURL,
        sandboxURL: URL = APNsClientConfiguration.appleSandboxURL,
        broadcastProductionURL: URL = APNsClientConfiguration.appleBroadcastProductionURL,
        broadcastSandboxURL: URL = APNsClientConfiguration.appleBroadcastSandboxURL,
        channelsProductionURL: URL = APNsClientConfiguration.appleChannelsProductionURL,
        channelsSandboxURL: URL = APNsClientConfiguration.appleChannelsSandboxURL,
        extraTrustRootsPEMFile: String? = nil,
        requestTimeout: Duration = .seconds(10),
        tokenLifetime: Duration = .seconds(50 * 60)
    ) {
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.broadcastProductionURL = broadcastProductionURL
        self.broadcastSandboxURL = broadcastSandboxURL
        self.channelsProductionURL = channelsProductionURL
        self.channelsSandboxURL = channelsSandboxURL
        self.extraTrustRootsPEMFile = extraTrustRootsPEMFile
        self.requestTimeout = requestTimeout
        self.tokenLifetime = tokenLifetime
    }

    /// Everything to one server (CREMA_APNS_URL set: a simulator or proxy): device pushes, broadcasts and channel
    /// management of both environments.
    public static func singleServer(
        _ url: URL,
        extraTrustRootsPEMFile: String? = nil
    ) -> Self {
        Self(
            productionURL: url, sandboxURL: url, broadcastProductionURL: url, broadcastSandboxURL: url,
            channelsProductionURL: url, channelsSandboxURL: url, extraTrustRootsPEMFile: extraTrustRootsPEMFile)
    }

    /// Broadcasts of both environments to `url` (`CREMA_APNS_BROADCAST_URL`).
    public mutating func sendBroadcasts(to url: URL) {
        broadcastProductionURL = url
        broadcastSandboxURL = url
    }

    /// Channel management of both environments at `url` (`CREMA_APNS_CHANNELS_URL`).
    public mutating func manageChannels(at url: URL) {
        channelsProductionURL = url
        channelsSandboxURL = url
    }

    /// The base URL for tokens of `environment`.
    public func baseURL(for environment: APNsEnvironment) -> URL {
        switch environment {
        case .production: productionURL
        case .sandbox: sandboxURL
        }
    }

    /// The base URL broadcasts to channels of `environment` go to.
    public func broadcastURL(for environment: APNsEnvironment) -> URL {
        switch environment {
        case .production: broadcastProductionURL
        case .sandbox: broadcastSandboxURL
        }
    }

    /// The base URL of the channel-management API for `environment`.
    public func channelsURL(for environment: APNsEnvironment) -> URL {
        switch environment {
        case .production: channelsProductionURL
        case .sandbox: channelsSandboxURL
        }
    }
}
