import CremaClock
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Opens TLS + HTTP/2 connections to APNs hosts: one TLS context for the client, ALPN `h2` only.
struct APNsConnector: Sendable {
    let sslContext: NIOSSLContext
    let group: any EventLoopGroup
    let connectTimeout: Duration
    let retriesFailedConnections: Bool
    /// Spaces out the attempts (the backoff); the connect deadline itself is an I/O deadline on NIO's real time.
    let clock: CremaClock

    /// APNs never pushes to the client; the other settings are NIOHTTP2's defaults. Streams the client reset (a
    /// request past its deadline) are remembered by the thousand (1,024), not NIOHTTP2's default 32: an answer
    /// that arrives for a reset stream NIOHTTP2 no longer remembers is a connection error, and a slow APNs can
    /// time out a whole window of requests at once.
    static let http2: NIOHTTP2Handler.ConnectionConfiguration = {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),
            // Room for the largest answer read (an `all-channels` list) in one stream window: the client sends no
            // stream-level WINDOW_UPDATE. The connection window still caps what is in flight at once.
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        configuration.maximumRecentlyResetStreams = 1_024
        return configuration
    }()

    /// A connection whose TLS handshake agreed on HTTP/2. Failed attempts to reach the host are tried again with
    /// backoff until `connectTimeout` when `retriesFailedConnections` is set; TLS failures are not.
    func connect(_ endpoint: APNsEndpoint) async throws(APNsClientError) -> APNsConnection {
        let end = NIODeadline.now() + TimeAmount(connectTimeout)
        var delay = TimeAmount.milliseconds(50)
        while true {
            do {
                return try await attempt(endpoint, until: end)
            } catch {
                let failure = APNsClient.classify(error)
                guard retriesFailedConnections, case .connectionFailed = failure, NIODeadline.now() + delay < end,
                    !Task.isCancelled
                else { throw failure }
                try? await clock.sleep(for: .nanoseconds(delay.nanoseconds))
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    private func attempt(_ endpoint: APNsEndpoint, until end: NIODeadline) async throws -> APNsConnection {
        let loop = group.next()
        let handshake = loop.makePromise(of: Void.self)
        let flags = APNsConnectionFlags()
        // SNI names hosts, never addresses; an address is checked against the certificate's IP entries instead.
        let serverName: String? = (try? SocketAddress(ipAddress: endpoint.host, port: 0)) == nil ? endpoint.host : nil
        let sslContext = self.sslContext
        let timeout = max(end - .now(), .milliseconds(1))
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(timeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    let handler = APNsConnectionHandler(flags: flags, handshake: handshake, handshakeDeadline: end)
                    try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                    try sync.addHandler(NIOHTTP2Handler(mode: .client, frameDelegate: handler, connectionConfiguration: Self.http2))
                    try sync.addHandler(handler)
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .get()
        do {
            try await handshake.futureResult.get()
            let handler = try await loop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: APNsConnectionHandler.self), eventLoop: loop)
            }.get()
            return APNsConnection(channel: channel, handler: handler, flags: flags)
        } catch {
            channel.close(promise: nil)
            throw error
        }
    }
}
