import NIOCore
import NIOHTTPTypes
import Prometheus
import Synchronization

/// Last handler of a connection until its first request head is whole: only then is the channel wrapped
/// for Swift concurrency and handed to the server for a task (and this handler leaves), so a silent or
/// trickling client costs a channel and a timer, never a task (docs/reliability.md, stalled connections).
final class FirstRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    enum Phase { case waiting, handedOver, closed }

    private let handOver: @Sendable (ArrivedConnection) -> Void
    private let waiting: Gauge
    private var phase = Phase.waiting

    /// - Parameters:
    ///   - handOver: receives the wrapped connection, on its event loop, once.
    ///   - waiting: counts this connection until its first head arrives or it closes, whichever is first.
    init(waiting: Gauge, handOver: @escaping @Sendable (ArrivedConnection) -> Void) {
        self.waiting = waiting
        self.handOver = handOver
        waiting.increment()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard phase == .waiting, case .head = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        phase = .handedOver
        waiting.decrement()
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
        if phase == .waiting, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// On close (`HTTPConnectionStateHandler` does not pass `channelInactive` on, the pipeline's teardown
    /// removes every handler).
    func handlerRemoved(context: ChannelHandlerContext) {
        if phase == .waiting {
            phase = .closed
            waiting.decrement()
        }
    }

}

/// A connection whose first request head has arrived, on its way to its task. NIO traps when the wrapper of
/// a channel is released without being closed, so one that is never served (the server stopped between the
/// head and the task) closes itself properly.
final class ArrivedConnection: Sendable {
    private let value: Mutex<NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>?>

    init(_ connection: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) {
        value = Mutex(connection)
    }

    /// The connection, to its one task; nil after the first call.
    func take() -> NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>? {
        value.withLock { $0.take() }
    }

    deinit {
        if let connection = take() {
            Task { try? await connection.executeThenClose { _, _ in } }
        }
    }
}
