import NIOCore

/// Asks the pipeline's front to send a finished answer and end the connection.
struct RawResponse: Sendable {
    let bytes: ByteBuffer
}

/// First handler of every connection: sends a pre-encoded answer (a `RawResponse` event, or at once for a
/// refused connection) past the HTTP encoder, half-closes, and drains what the client still sends for a
/// short linger, so the answer is read before the close rather than lost to a reset.
final class RawResponseWriter: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// How long a connection that was answered this way may stay open for the client to finish sending.
    static let linger: TimeAmount = .seconds(1)

    private var pending: ByteBuffer?
    private var lingering = false
    private var lingerTimer: Scheduled<Void>?

    /// - Parameter answerAtOnce: sent as soon as the connection is active (a refusal).
    init(answerAtOnce: ByteBuffer? = nil) {
        pending = answerAtOnce
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive, let bytes = pending { answer(context: context, bytes) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if let bytes = pending { answer(context: context, bytes) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        lingerTimer?.cancel()
        lingerTimer = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if lingering { return }  // answered: the rest of what the client sends is dropped unread
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if lingering {
            context.read()
            return
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let response = event as? RawResponse else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        answer(context: context, response.bytes)
        promise?.succeed()
    }

    private func answer(context: ChannelHandlerContext, _ bytes: ByteBuffer) {
        pending = nil
        guard !lingering, context.channel.isActive else { return }
        lingering = true
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes))).assumeIsolated().whenComplete { result in
            switch result {
            case .success: context.close(mode: .output, promise: nil)
            case .failure: context.close(promise: nil)
            }
        }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.linger) { context.close(promise: nil) }
        context.read()
    }
}
