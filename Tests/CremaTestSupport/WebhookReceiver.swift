public import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A webhook receiver for tests, over real HTTP/1.1 (or HTTPS with the given certificate) on 127.0.0.1: records every
/// request it gets, and answers as the test tells it (a status, or never, to play a receiver that hangs).
public final class WebhookReceiver: Sendable {
    /// One request as received.
    public struct Request: Sendable {
        public var headers: [String: String]
        public var body: Data
        public var eventID: String { headers["crema-event-id"] ?? "" }
        public var eventType: String { headers["crema-event-type"] ?? "" }
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    /// How the receiver answers.
    public enum Behaviour: Sendable, Equatable {
        case status(Int)
        /// Never answers (the request stays open until the sender gives up).
        case hang
    }

    private struct State {
        var requests: [Request] = []
        var behaviour: Behaviour = .status(200)
    }

    private let state = Mutex(State())
    private let channel: any Channel
    public let port: Int
    public let isHTTPS: Bool

    /// `certificatePEM`/`privateKeyPEM`: serve HTTPS with them (the certificate must name 127.0.0.1 or localhost).
    public static func start(certificatePEM: String? = nil, privateKeyPEM: String? = nil) async throws -> WebhookReceiver {
        var tls: NIOSSLContext?
        if let certificatePEM, let privateKeyPEM {
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
            tls = try NIOSSLContext(configuration: configuration)
        }
        let holder = ReceiverHolder()
        let tlsContext = tls
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tlsContext { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tlsContext)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(holder: holder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let receiver = WebhookReceiver(channel: channel, https: tls != nil)
        holder.receiver.withLock { $0 = receiver }
        return receiver
    }

    private init(channel: any Channel, https: Bool) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
        self.isHTTPS = https
    }

    /// The receiver's URL with `path`.
    public func url(_ path: String = "/hooks") -> String { "\(isHTTPS ? "https" : "http")://127.0.0.1:\(port)\(path)" }

    public func answer(_ behaviour: Behaviour) { state.withLock { $0.behaviour = behaviour } }

    public var requests: [Request] { state.withLock { $0.requests } }

    /// The requests of each event id once (the first), as a receiver deduplicating by `Crema-Event-Id` keeps them.
    public var deduplicated: [Request] {
        var seen = Set<String>()
        return requests.filter { seen.insert($0.eventID).inserted }
    }

    public func stop() async throws { try await channel.close() }

    fileprivate func received(_ request: Request) -> Behaviour {
        state.withLock { state in
            state.requests.append(request)
            return state.behaviour
        }
    }
}

/// Lets the channel handlers reach the receiver created after the bootstrap.
private final class ReceiverHolder: Sendable {
    let receiver = Mutex<WebhookReceiver?>(nil)
}

private final class RequestHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let holder: ReceiverHolder
    private var head: HTTPRequestHead?
    private var body = Data()

    init(holder: ReceiverHolder) { self.holder = holder }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let behaviour = holder.receiver.withLock { $0 }?.received(WebhookReceiver.Request(headers: headers, body: body)) ?? .status(503)
            guard case .status(let code) = behaviour else { return }
            var responseHeaders = HTTPHeaders([("content-length", "0")])
            if !head.isKeepAlive { responseHeaders.add(name: "connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .init(statusCode: code), headers: responseHeaders))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
