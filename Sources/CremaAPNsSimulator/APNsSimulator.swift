import CremaClock
public import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// An APNs-compatible server over HTTP/2 + TLS that validates requests by Apple's rules, records them and
/// plays injected faults: the stand-in for Apple in tests, demos and `crema apns-sim`.
public final class APNsSimulator: Sendable {
    /// The port the listener is bound to.
    public let port: Int
    /// `https://<host>:<port>`, the value for `CREMA_APNS_URL`.
    public let baseURL: URL
    /// The PEM file clients must trust (`CREMA_APNS_CA_FILE`).
    public let caFile: String

    private let core: SimulatorCore
    private let listener: any Channel
    private let connections: ConnectionTracker

    private init(
        port: Int, baseURL: URL, caFile: String, core: SimulatorCore, listener: any Channel,
        connections: ConnectionTracker
    ) {
        self.port = port
        self.baseURL = baseURL
        self.caFile = caFile
        self.core = core
        self.listener = listener
        self.connections = connections
    }

    /// Loads or creates the certificate in `configuration.directory` and starts listening.
    public static func start(_ configuration: APNsSimulatorConfiguration, logger: Logger) async throws -> APNsSimulator
    {
        let certificate = try SimulatorCertificate.loadOrCreate(directory: configuration.directory, now: configuration.clock.now)
        let verifier = try ProviderTokenVerifier(keys: configuration.keys)
        let core = SimulatorCore(
            validator: APNsRequestValidator(bundleIDs: configuration.bundleIDs, startsNeedCollapseID: configuration.startsNeedCollapseID),
            verifier: verifier,
            channels: SimulatorChannels(limit: configuration.maxChannelsPerApp),
            maxRecords: configuration.maxRecords,
            clock: configuration.clock,
            logger: logger)

        let sslContext: NIOSSLContext
        do {
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificate.certificatePEM.utf8)).map {
                    .certificate($0)
                },
                privateKey: .privateKey(
                    try NIOSSLPrivateKey(bytes: Array(certificate.privateKeyPEM.utf8), format: .pem)))
            tls.minimumTLSVersion = .tlsv12
            tls.applicationProtocols = ["h2", "http/1.1"]
            sslContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw APNsSimulatorError.certificate(reason: "cannot load the certificate into TLS: \(error)")
        }

        let connections = ConnectionTracker()
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                connections.add(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in
                            let connection = SimulatorConnection(id: core.nextConnectionID(), httpVersion: "h2")
                            return channel.configureHTTP2Pipeline(
                                mode: .server,
                                initialLocalSettings: [
                                    HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000),
                                    HTTP2Setting(parameter: .maxHeaderListSize, value: 16 * 1024),
                                    HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                                ],
                                inboundStreamInitializer: { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            EndStreamOnLastFrame(),
                                            AuthorityFromHost(),
                                            HTTP2FramePayloadToHTTP1ServerCodec(),
                                            SimulatorHandler(core: core, connection: connection),
                                        ])
                                    }
                                }
                            ).map { _ in }
                        },
                        http1ChannelConfigurator: { channel in
                            let connection = SimulatorConnection(id: core.nextConnectionID(), httpVersion: "http/1.1")
                            return channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                                try channel.pipeline.syncOperations.addHandler(
                                    SimulatorHandler(core: core, connection: connection))
                            }
                        })
                }
            }

        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            throw APNsSimulatorError.bind(host: configuration.host, port: configuration.port, reason: "\(error)")
        }
        let port = listener.localAddress?.port ?? configuration.port
        let host: String
        switch configuration.host {
        case "0.0.0.0", "::", "": host = "127.0.0.1"
        case let literal where literal.contains(":"): host = "[\(literal)]"
        case let name: host = name
        }
        logger.info(
            "APNs simulator listening",
            metadata: ["url": "https://\(host):\(port)", "ca_file": "\(certificate.caFile)"])
        return APNsSimulator(
            port: port,
            baseURL: URL(string: "https://\(host):\(port)")!,
            caFile: certificate.caFile,
            core: core,
            listener: listener,
            connections: connections)
    }

    /// Every request received (accepted or refused), oldest first; only those to `token` when given.
    public func records(token: String? = nil) -> [APNsSimulatorRecord] { core.records(token: token) }

    /// Returns once `count` requests to `token` have arrived since the simulator started (a request held by a
    /// latency or hold fault counts on arrival), for tests that must act while a push is in flight.
    public func received(token: String, count: Int = 1) async { await core.received(token: token, count: count) }

    /// The broadcasts that reached `channel` (accepted or refused), oldest first.
    public func records(channel: String) -> [APNsSimulatorRecord] { core.records(channel: channel) }

    /// Returns once `count` broadcasts to `channel` have arrived since the simulator started (refused ones count).
    public func received(channel: String, count: Int = 1) async {
        await core.received(token: "channel:" + channel, count: count)
    }

    /// Every app's broadcast channels, by app and then oldest first.
    public func channels() -> [APNsSimulatorChannel] { core.channels.all() }

    /// Forgets one channel, as when APNs loses it: later broadcasts to it are 400 `ChannelNotRegistered` and
    /// `all-channels` no longer lists it. False when no app has it.
    @discardableResult
    public func forgetChannel(_ id: String) -> Bool { core.channels.forget(id) }

    /// Forgets all records.
    public func clearRecords() { core.clearRecords() }

    /// Accepts provider tokens of one more key from now on, as Apple does once a key is uploaded to the developer
    /// account: the built-in simulator trusts each key the admin API activates.
    public func trust(_ key: APNsSimulatorKey) throws(APNsSimulatorError) { try core.verifier.trust(key) }

    /// Adds a fault; see ``APNsSimulatorFault`` for when each applies.
    public func inject(_ fault: APNsSimulatorFault) { core.inject(fault) }

    /// Removes every fault, including persistent `unregistered` ones. Answers already held stay held.
    public func clearFaults() { core.clearFaults() }

    /// Answers every request a `hold` fault has held so far, and returns how many that was.
    @discardableResult
    public func releaseHeld() -> Int { core.releaseHeld() }

    /// Stops listening and closes every open connection.
    public func shutdown() async throws {
        try await listener.close()
        let open = connections.all()
        for channel in open {
            try? await channel.close()
        }
        // Answers still held would keep their handlers (and this core) alive; their streams are closed, so they go nowhere.
        _ = core.releaseHeld()
    }
}

/// Remembers open connections so ``APNsSimulator/shutdown()`` can close them.
private final class ConnectionTracker: Sendable {
    private let connections = Mutex<[ObjectIdentifier: any Channel]>([:])

    func all() -> [any Channel] { connections.withLock { Array($0.values) } }

    func add(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        connections.withLock { $0[id] = channel }
        channel.closeFuture.whenComplete { _ in
            self.connections.withLock { _ = $0.removeValue(forKey: id) }
        }
    }
}
