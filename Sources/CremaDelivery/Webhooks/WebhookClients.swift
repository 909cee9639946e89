import AsyncHTTPClient
import Logging
import NIOCore
import NIOSSL

/// One HTTP client per receiver host and the address it was checked at: the request connects to exactly that
/// address (AsyncHTTPClient's `dnsOverride`, keeping the host name for TLS and `Host`), so DNS cannot answer one address
/// to the check and another to the connection. Clients keep their connections between deliveries.
actor WebhookClients {
    private struct Key: Hashable {
        var host: String
        var address: String
    }

    private var clients: [Key: HTTPClient] = [:]
    private var order: [Key] = []
    private let configuration: HTTPClient.Configuration
    private let logger: Logger
    /// Old clients are closed beyond this many (hosts that moved, endpoints deleted).
    private let capacity = 128

    init(trustRootsPEMFile: String?, connectTimeout: Double, logger: Logger) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let file = trustRootsPEMFile {
            // Added to the system roots: a receiver with a private CA, and every public one.
            tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(file))]
        }
        var http = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000))), connectionPool: .init(idleTimeout: .seconds(60)))
        http.httpVersion = .automatic
        http.decompression = .disabled
        configuration = http
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .debug)
        self.logger = quiet
    }

    /// The client that connects to `address` for `host` (no override for an IP literal host).
    func client(host: String, address: String) -> HTTPClient {
        let key = Key(host: host, address: address)
        if let client = clients[key] { return client }
        var configuration = self.configuration
        if host != address { configuration.dnsOverride = [host: address] }
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration, backgroundActivityLogger: logger)
        clients[key] = client
        order.append(key)
        if order.count > capacity {
            let oldest = order.removeFirst()
            if let old = clients.removeValue(forKey: oldest) { Task { try? await old.shutdown() } }
        }
        return client
    }

    func shutdown() async {
        let all = clients.values
        clients = [:]
        order = []
        for client in all { try? await client.shutdown() }
    }
}
