import Foundation
import Logging
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// Where one APNs base URL points: the host and port to connect to, the `:authority` to name, and the path
/// prefix (empty for Apple) that `/3/device/<token>` follows.
struct APNsEndpoint: Sendable, Hashable {
    var host: String
    var port: Int
    var authority: String
    var pathPrefix: String

    init(_ url: URL) throws(APNsClientError) {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw .invalidRequest("APNs base URL \(url.absoluteString) is not an https URL with a host")
        }
        self.host = host
        port = url.port ?? 443
        authority = url.port.map { "\(host):\($0)" } ?? host
        var path = url.path
        while path.hasSuffix("/") { path.removeLast() }
        pathPrefix = path
    }
}

/// Opens TLS + HTTP/2 connections to APNs hosts: one TLS context for the client, ALPN `h2` only.
struct APNsConnector: Sendable {
    let sslContext: NIOSSLContext
    let group: any EventLoopGroup
    let connectTimeout: Duration
    let retriesFailedConnections: Bool

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
                try? await Task.sleep(nanoseconds: UInt64(delay.nanoseconds))
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

/// The connection of one signing key to one APNs host: opened on first use, replaced when it closes, goes
/// away (GOAWAY) or runs out of stream ids. Concurrent sends wait for one connection attempt together.
final class APNsHostLink: Sendable {
    let endpoint: APNsEndpoint
    private let connector: APNsConnector
    private let state = Mutex(State())

    private struct State {
        var current: APNsConnection?
        /// Connections replaced while still open (finishing their last requests), closed with the link.
        var retired: [APNsConnection] = []
        /// The attempt under way, and its number (so that only it clears itself).
        var connecting: (attempt: Int, task: Task<APNsConnection, any Error>)?
        var attempts = 0
        var closed = false
    }

    init(endpoint: APNsEndpoint, connector: APNsConnector) {
        self.endpoint = endpoint
        self.connector = connector
    }

    private enum Next {
        case ready(APNsConnection)
        case wait(Task<APNsConnection, any Error>)
    }

    /// A connection that takes new requests, opening one if needed (one attempt at a time, shared).
    func connection() async throws(APNsClientError) -> APNsConnection {
        let next = try state.withLock { state throws(APNsClientError) -> Next in
            guard !state.closed else { throw .shutDown }
            if let current = state.current {
                if current.acceptsStreams { return .ready(current) }
                state.current = nil
                state.retired.removeAll { !$0.isOpen }
                if current.isOpen { state.retired.append(current) }
            }
            if let connecting = state.connecting { return .wait(connecting.task) }
            let connector = self.connector
            let endpoint = self.endpoint
            state.attempts += 1
            let attempt = state.attempts
            let task = Task { [weak self] () async throws -> APNsConnection in
                do {
                    let connection = try await connector.connect(endpoint)
                    self?.attempt(attempt, ended: connection)
                    return connection
                } catch {
                    self?.attempt(attempt, ended: nil)
                    throw error
                }
            }
            state.connecting = (attempt, task)
            return .wait(task)
        }
        let task: Task<APNsConnection, any Error>
        switch next {
        case .ready(let connection): return connection
        case .wait(let attempt): task = attempt
        }
        do {
            let connection = try await task.value
            if state.withLock({ $0.closed }) {
                connection.close()
                throw APNsClientError.shutDown
            }
            return connection
        } catch {
            throw APNsClient.classify(error)
        }
    }

    /// Closes the connections and refuses new sends (``APNsClientError/shutDown``); the futures complete when
    /// they have closed.
    func close() -> [EventLoopFuture<Void>] {
        let open = state.withLock { state in
            state.closed = true
            defer {
                state.current = nil
                state.retired = []
            }
            return (state.current.map { [$0] } ?? []) + state.retired
        }
        return open.map { $0.close() }
    }

    /// Attempt `attempt` ended with `connection` (nil: it failed). A connection made after ``close()`` is closed.
    private func attempt(_ attempt: Int, ended connection: APNsConnection?) {
        let stale: APNsConnection? = state.withLock { state in
            if state.connecting?.attempt == attempt { state.connecting = nil }
            guard let connection else { return nil }
            if state.closed { return connection }
            if let current = state.current, current !== connection, current.isOpen { state.retired.append(current) }
            state.current = connection
            return nil
        }
        stale?.close()
    }
}
