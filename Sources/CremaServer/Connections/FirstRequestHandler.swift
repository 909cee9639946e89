import NIOCore
import NIOHTTPTypes

/// Last handler of the HTTP pipeline until the decoder's first request head, when it wraps the channel for a
/// task and leaves: no connection has a task before it has a request (docs/reliability.md).
final class FirstRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let clientGone: ClientGoneWatch
    private let handOver: @Sendable (ArrivedConnection) -> Void

    /// - Parameters:
    ///   - clientGone: the connection's watch, handed over with it so its task can be cancelled when the client leaves.
    ///   - handOver: receives the wrapped connection, on its event loop, once.
    init(clientGone: ClientGoneWatch, handOver: @escaping @Sendable (ArrivedConnection) -> Void) {
        self.clientGone = clientGone
        self.handOver = handOver
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        do {
            // The wrapper's handlers go in after this one, so the head fired below is its first element.
            let connection = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                wrappingChannelSynchronously: context.channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            context.fireChannelRead(data)
            handOver(ArrivedConnection(connection, clientGone: clientGone))
            // Its work is done: every later part and event goes straight to the wrapper.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    /// Before the head (after it, this handler is gone) no one reads this connection's errors: the
    /// protocol-error handler has already answered what deserves an answer, and the rest end with the close.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}

    /// A client that ends its side before a whole head is done (with remote half-closure nothing else would close
    /// it before its deadline); the decoder has already answered a half head with `malformed_request`.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
