import CremaSettings
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Prometheus

/// Gives every connection exactly one running clock: the read timeout while a request is expected or
/// arriving (from the connect, or from its first byte, to its last), none while Crema answers, and the
/// idle timeout between requests. Hummingbird's own idle timeout restarts on every body part, so a
/// trickled body would never end, and it cannot count what it closes.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    enum Phase { case reading, answering, idle }

    private let limits: ConnectionLimits
    private let metrics: ConnectionMetrics
    private var phase: Phase = .reading
    /// Requests whose head arrived and whose response has not been written to its end.
    private var unanswered = 0
    private let timer = DeadlineClose()
    /// The first request's read deadline, drawn when the connection was accepted (`AwaitingHeadHandler`).
    private var firstReadDeadline: NIODeadline?

    init(limits: ConnectionLimits, metrics: ConnectionMetrics, readingUntil firstReadDeadline: NIODeadline? = nil) {
        self.limits = limits
        self.metrics = metrics
        self.firstReadDeadline = firstReadDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { enter(.reading, context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { cancelTimer() }

    func channelActive(context: ChannelHandlerContext) {
        if !timer.isArmed { enter(.reading, context: context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            // A request already being read keeps its deadline (it started at its first byte or the connect).
            if phase != .reading { enter(.reading, context: context) }
        case .body:
            break
        case .end:
            // Read in full: no clock while it is answered (a stream may run for hours), unless it already was.
            enter(unanswered > 0 ? .answering : .idle, context: context)
        }
        context.fireChannelRead(data)
    }

    /// Bytes arrived; if the connection was idle they begin the next request, whose head may still be partial.
    func channelReadComplete(context: ChannelHandlerContext) {
        if phase == .idle { enter(.reading, context: context) }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered -= 1
            if unanswered == 0, phase == .answering { enter(.idle, context: context) }
        }
        context.write(data, promise: promise)
    }

    /// A request that cannot be parsed is answered and closed by the handlers after this one.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            cancelTimer()
            phase = .answering
        }
        context.fireErrorCaught(error)
    }

    private func enter(_ next: Phase, context: ChannelHandlerContext) {
        cancelTimer()
        phase = next
        let deadline: NIODeadline
        switch next {
        case .reading:
            deadline = firstReadDeadline ?? context.eventLoop.now + TimeAmount(limits.readDeadline(random: Double.random(in: 0..<1)))
            firstReadDeadline = nil
        case .idle: deadline = context.eventLoop.now + TimeAmount(limits.idleTimeout)
        case .answering: return
        }
        timer.arm(at: deadline, counting: next == .reading ? metrics.timedOutReading : metrics.timedOutIdle, context: context)
    }

    private func cancelTimer() { timer.cancel() }
}
