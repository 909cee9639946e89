import NIOCore
import NIOHTTPTypes
import Prometheus

/// Notices a client that ends its side of the connection (end of file or a reset) while one of its requests is
/// being answered (head received, answer not yet ended), and tells the connection's `ClientGoneWatch`. An end of
/// file between requests is the ordinary end of a keep-alive connection and tells nothing, and neither does a close
/// the server starts (a deadline, a raw answer, a stop). As Go's net/http and nginx do, an end of file mid-request
/// counts as leaving: a client that half-closes after a whole request loses its answer.
final class ClientGoneHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let watch: ClientGoneWatch
    private let abandoned: Counter
    /// Requests whose head arrived and whose answer has not ended (more than one when a client pipelines).
    private var unanswered = 0

    init(watch: ClientGoneWatch, abandoned: Counter) {
        self.watch = watch
        self.abandoned = abandoned
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { unanswered += 1 }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered = max(0, unanswered - 1) }
        context.write(data, promise: promise)
    }

    /// A close the server starts (a read deadline, an answer written raw, a stop) is not the client leaving.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        unanswered = 0
        context.close(mode: mode, promise: promise)
    }

    /// An answer written in front of the encoder (`RawResponse`: CONNECT, parse errors) ends the request too.
    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is RawResponse { unanswered = 0 }
        context.triggerUserOutboundEvent(event, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { clientLeft() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        clientLeft()
        context.fireChannelInactive()
    }

    private func clientLeft() {
        guard unanswered > 0 else { return }
        unanswered = 0
        abandoned.increment()
        watch.clientLeft()
    }
}
