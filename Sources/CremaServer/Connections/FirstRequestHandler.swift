import NIOCore
import NIOHTTPTypes
import Prometheus
import Synchronization

/// Last handler of a connection until its first whole request head, when it wraps the channel for a task and
/// leaves: a silent or trickling client costs a channel and a timer, never a task (docs/reliability.md).
final class FirstRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let handOver: @Sendable (ArrivedConnection) -> Void
    private let waiting: Gauge
    /// Until the first head arrives or the connection closes; either ends the count, once.
    private var awaiting = true

    /// - Parameters:
    ///   - handOver: receives the wrapped connection, on its event loop, once.
    ///   - waiting: counts this connection until its first head arrives or it closes, whichever is first.
    init(waiting: Gauge, handOver: @escaping @Sendable (ArrivedConnection) -> Void) {
        self.waiting = waiting
        self.handOver = handOver
    }

    func handlerAdded(context: ChannelHandlerContext) { waiting.increment() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard awaiting, case .head = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        stopCounting()
        do {
            // The wrapper's handlers go in after this one, so the head fired below is its first element.
            let connection = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                wrappingChannelSynchronously: context.channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            context.fireChannelRead(data)
            handOver(ArrivedConnection(connection))
            // Its work is done: every later part and event goes straight to the wrapper.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    /// Before the head (after it, this handler is gone) no one reads this connection's errors: the
    /// protocol-error handler has already answered what deserves an answer, and the rest end with the close.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}

    /// A client that ends its side before a whole head (a preconnect never used, a port check) is done: with
    /// remote half-closure allowed, nothing else would close the connection before its read deadline. A half
    /// head was already answered (`malformed_request`, flushed) when the decoder saw the end of input.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if awaiting, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// At the hand-over (the count already ended) or on close: `HTTPConnectionStateHandler` does not pass
    /// `channelInactive` on, but the pipeline's teardown removes every handler.
    func handlerRemoved(context: ChannelHandlerContext) { stopCounting() }

    private func stopCounting() {
        guard awaiting else { return }
        awaiting = false
        waiting.decrement()
    }

}
