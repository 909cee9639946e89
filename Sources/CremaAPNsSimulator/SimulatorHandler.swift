import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Reads one HTTP request (an HTTP/2 stream, or one HTTP/1.1 request), hands it to the core and writes the
/// answer, after any injected delay; for a drop fault it closes the whole connection instead.
final class SimulatorHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: SimulatorCore
    private let connection: SimulatorConnection
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(core: SimulatorCore, connection: SimulatorConnection) {
        self.core = core
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            // Enough to see any oversize payload; the rest is not kept.
            if body.readableBytes < 1 << 20 { body.writeBuffer(&chunk) }
        case .end:
            guard let head else { return }
            self.head = nil
            let exchange = SimulatorExchange(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) },
                body: Data(buffer: body),
                receivedAt: Date())
            let reply = core.handle(exchange, connection: connection)
            let delay: Duration?
            switch reply {
            case .respond(_, _, _, let wait), .drop(let wait): delay = wait
            }
            if let delay {
                let nanoseconds =
                    delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
                    self.perform(reply, for: head, context: context)
                }
            } else {
                perform(reply, for: head, context: context)
            }
        }
    }

    private func perform(_ reply: SimulatorCore.Reply, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        switch reply {
        case .drop:
            (context.channel.parent ?? context.channel).close(promise: nil)
        case .respond(let status, let headers, let body, _):
            var responseHeaders = HTTPHeaders(headers)
            responseHeaders.add(name: "content-length", value: String(body.count))
            let keepAlive = request.isKeepAlive || request.version.major >= 2
            if request.version.major < 2, !keepAlive { responseHeaders.add(name: "connection", value: "close") }
            let head = HTTPResponseHead(
                version: request.version, status: HTTPResponseStatus(statusCode: status), headers: responseHeaders)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if !body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(data: body)))), promise: nil)
            }
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if !keepAlive {
                let channel = context.channel
                done.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
