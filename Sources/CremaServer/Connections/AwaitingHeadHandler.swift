import CremaSettings
import NIOCore
import Prometheus

/// An admitted connection's only handler until its first request head is whole: a silent or trickling client
/// costs one handler and a timer, not eight handlers and a decoder fed a byte at a time (docs/reliability.md).
final class AwaitingHeadHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Adds the HTTP handlers behind this one; the deadline is the read deadline the request keeps.
    typealias BuildHTTPPipeline = (any Channel, NIODeadline?) throws -> Void

    private let limits: ConnectionLimits
    private let metrics: ConnectionMetrics
    private let buildHTTPPipeline: BuildHTTPPipeline
    /// What arrived so far; none of it is a whole head yet.
    private var received: ByteBuffer?
    private var scanner = RequestHeadScanner()
    private var deadline: NIODeadline?
    private let timer = DeadlineClose()
    /// Until the head's end arrives or the connection closes; either ends the count, once.
    private var awaiting = true

    init(limits: ConnectionLimits, metrics: ConnectionMetrics, buildHTTPPipeline: @escaping BuildHTTPPipeline) {
        self.limits = limits
        self.metrics = metrics
        self.buildHTTPPipeline = buildHTTPPipeline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        metrics.waitingForFirstRequest.increment()
        if context.channel.isActive { startClock(context: context) }
    }

    /// On the hand-over (the count already ended) or on close, when the pipeline's teardown removes every handler.
    func handlerRemoved(context: ChannelHandlerContext) {
        timer.cancel()
        stopCounting()
    }

    func channelActive(context: ChannelHandlerContext) {
        startClock(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        let verdict = scanner.scan(bytes.readableBytesView)
        let firstRead = received == nil
        if firstRead {
            received = bytes  // most requests arrive whole in their first read: passed on as read, no copy
        } else {
            received!.writeBuffer(&bytes)
        }
        // Past the decoder's limit without an end, the decoder takes over: it answers 431 once its own count
        // (the target and the fields) passes the limit.
        if verdict != .incomplete || received!.readableBytes > ProtocolErrorHandler.headerLimit {
            handOver(context: context, then: nil)
        } else if firstRead {
            // Kept in a buffer its own size: the read's buffer goes back to the channel's pool for the next read.
            var kept = context.channel.allocator.buffer(capacity: received!.readableBytes)
            kept.writeImmutableBuffer(received!)
            received = kept
        }
    }

    /// Nothing after this handler needs to know until there is a head to read.
    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)  // shutting down: a request not yet sent is not waited for
        } else if let event = event as? ChannelEvent, event == .inputClosed {
            // Ended before a whole head: with nothing sent it is done (a preconnect, a port check), but a half
            // head is the decoder's to answer (`malformed_request`), as it would be mid-connection.
            if received == nil { context.close(promise: nil) } else { handOver(context: context, then: event) }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Before the head no one reads this connection's errors; NIO closes it after any that ends it.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}

    /// Builds the HTTP pipeline behind this handler, passes it what arrived (and `event`), and leaves.
    private func handOver(context: ChannelHandlerContext, then event: ChannelEvent?) {
        stopCounting()
        timer.cancel()
        do {
            try buildHTTPPipeline(context.channel, deadline)
        } catch {
            context.close(promise: nil)
            return
        }
        if let bytes = received {
            received = nil
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        if let event { context.fireUserInboundEventTriggered(event) }
        // A read in progress ends with a channelReadComplete that now reaches the HTTP handlers directly (the end of
        // input comes after its read's completion, and with no head there is nothing to complete).
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private func startClock(context: ChannelHandlerContext) {
        guard deadline == nil, awaiting else { return }
        let deadline = context.eventLoop.now + TimeAmount(limits.readDeadline(random: Double.random(in: 0..<1)))
        self.deadline = deadline
        timer.arm(at: deadline, counting: metrics.timedOutReading, context: context)
    }

    private func stopCounting() {
        guard awaiting else { return }
        awaiting = false
        metrics.waitingForFirstRequest.decrement()
    }
}
