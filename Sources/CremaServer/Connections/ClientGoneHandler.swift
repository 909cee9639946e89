import NIOCore
import NIOHTTPTypes
import Prometheus

/// Notices a client that ends its side of the connection (end of file or a reset) while one of its requests is
/// being answered (head received, answer not yet ended), and tells the connection's `ClientGoneWatch`. An end of
/// file between requests is the ordinary end of a keep-alive connection and tells nothing. As Go's net/http and
/// nginx do, an end of file mid-request counts as leaving: a client that half-closes after a whole request loses
/// its answer.
final class ClientGoneHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let watch: ClientGoneWatch
    private let abandoned: Counter
    private var answering = false

    init(watch: ClientGoneWatch, abandoned: Counter) {
        self.watch = watch
        self.abandoned = abandoned
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { answering = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answering = false }
        context.write(data, promise: promise)
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
        guard answering else { return }
        answering = false
        abandoned.increment()
        watch.clientLeft()
    }
}
