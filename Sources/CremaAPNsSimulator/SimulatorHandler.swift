import CremaClock
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOHTTP2

/// Reads one HTTP request (an HTTP/2 stream, or one HTTP/1.1 request), hands it to the core and writes the
/// answer, after any injected delay or hold; for a drop fault it closes the whole connection instead.
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
            // Only an HTTP/2 stream has a stream id (a socket channel traps when asked for one).
            if connection.httpVersion == "h2",
                let stream = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID),
                !connection.processes(stream: Int(stream))
            {
                // Past this connection's GOAWAY: never processed, so the client may send it again elsewhere.
                context.close(promise: nil)
                return
            }
            let exchange = SimulatorExchange(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) },
                body: Data(buffer: body),
                receivedAt: core.clock.now)
            let reply = core.handle(exchange, connection: connection)
            guard case .respond(_, _, _, let wait?, _) = reply else {
                perform(reply, for: head, context: context)
                return
            }
            switch wait {
            case .delay(let delay):
                let nanoseconds =
                    delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000
                context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(nanoseconds)) {
                    self.perform(reply, for: head, context: context)
                }
            case .release(let ticket):
                let loop = context.eventLoop
                let parked = NIOLoopBound((handler: self, context: context), eventLoop: loop)
                core.whenReleased(ticket: ticket) {
                    loop.execute { parked.value.handler.perform(reply, for: head, context: parked.value.context) }
                }
            }
        }
    }

    private func perform(_ reply: SimulatorCore.Reply, for request: HTTPRequestHead, context: ChannelHandlerContext) {
        // Over HTTP/2 this channel is one stream; its parent is the connection.
        let http2Connection = connection.httpVersion == "h2" ? context.channel.parent : nil
        switch reply {
        case .drop:
            (http2Connection ?? context.channel).close(promise: nil)
        case .respond(let status, let headers, let body, _, let goAway):
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
            if goAway, let parent = http2Connection {
                // GOAWAY goes out before this answer: a stream refused after it is refused after the GOAWAY on the wire.
                let lastStreamID = HTTP2StreamID(connection.goAway())
                let frame = HTTP2Frame(
                    streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
                parent.writeAndFlush(frame, promise: nil)
            }
            let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
            if let parent = http2Connection {
                // After a GOAWAY, the connection closes once every stream it still processes has its answer, and a
                // moment later: closing with the client's next requests unread would reset the connection, and a
                // reset can discard answers the client has not read yet.
                if connection.answered() {
                    done.whenComplete { _ in
                        parent.eventLoop.scheduleTask(in: .milliseconds(100)) { parent.close(promise: nil) }
                    }
                }
            } else if goAway || !keepAlive {
                let channel = context.channel
                done.whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
