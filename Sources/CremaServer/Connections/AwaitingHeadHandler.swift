import NIOCore
import Prometheus

/// The only handler of an admitted connection until its first request head has arrived in full: it keeps the
/// bytes and the read deadline, and only then builds the HTTP pipeline, so a silent or trickling client costs one
/// handler and a timer rather than eight handlers and a decoder fed a byte at a time (docs/reliability.md).
final class AwaitingHeadHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Adds the HTTP handlers behind this one; the deadline is the read deadline the request keeps.
    typealias BuildHTTPPipeline = (any Channel, NIODeadline) throws -> Void

    private let limits: ConnectionLimits
    private let metrics: ConnectionMetrics
    private let buildHTTPPipeline: BuildHTTPPipeline
    /// What arrived so far; none of it is a whole head yet.
    private var received: ByteBuffer?
    /// Where the search for the head's end resumes in `received`: the bytes before it hold none.
    private var searched = 0
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
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
        timer?.cancel()
        timer = nil
        stopCounting()
    }

    func channelActive(context: ChannelHandlerContext) {
        startClock(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        let firstRead = received == nil
        if firstRead {
            received = bytes  // most requests arrive whole in their first read: passed on as read, no copy
        } else {
            received!.writeBuffer(&bytes)
        }
        // Past the decoder's limit without an end, the decoder is the one to answer (431).
        if containsHeadEnd() || received!.readableBytes > ProtocolErrorHandler.headerLimit {
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
        timer?.cancel()
        timer = nil
        do {
            try buildHTTPPipeline(context.channel, deadline ?? context.eventLoop.now)
        } catch {
            context.close(promise: nil)
            return
        }
        if let bytes = received {
            received = nil
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        if let event { context.fireUserInboundEventTriggered(event) }
        // The read in progress ends with a channelReadComplete that now reaches the HTTP handlers directly.
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// Whether `received` holds an empty line (CRLF CRLF, or bare LFs, which the decoder also accepts) past
    /// `searched`. Leading empty lines a client may send before its request line end the wait early; the HTTP
    /// pipeline then waits for the rest, under the same deadline.
    private func containsHeadEnd() -> Bool {
        guard let received else { return false }
        let found = received.withUnsafeReadableBytes { bytes -> Bool in
            var index = max(searched, 1)
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "\n") {
                    let previous = bytes[index - 1]
                    if previous == UInt8(ascii: "\n") { return true }
                    if previous == UInt8(ascii: "\r"), index >= 2, bytes[index - 2] == UInt8(ascii: "\n") { return true }
                }
                index += 1
            }
            return false
        }
        // Each LF looks back at the bytes before it, so an end split across reads is found from its last byte.
        searched = received.readableBytes
        return found
    }

    private func startClock(context: ChannelHandlerContext) {
        guard timer == nil, awaiting else { return }
        let deadline = context.eventLoop.now + TimeAmount(limits.readDeadline(random: Double.random(in: 0..<1)))
        self.deadline = deadline
        let counter = metrics.timedOutReading
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            guard let self, self.timer != nil else { return }
            self.timer = nil
            counter.increment()
            context.close(promise: nil)
        }
    }

    private func stopCounting() {
        guard awaiting else { return }
        awaiting = false
        metrics.waitingForFirstRequest.decrement()
    }
}
