import NIOCore
import Prometheus

/// A connection's pending close at a deadline, counted when it fires: the one way both handlers that time a
/// connection (before its head, and through its requests) end it.
final class DeadlineClose {
    private var scheduled: Scheduled<Void>?

    /// Replaces any pending close with one at `deadline`, on `context`'s event loop.
    func arm(at deadline: NIODeadline, counting counter: Counter, context: ChannelHandlerContext) {
        cancel()
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            // A cancel that came too late to stop the task still stops the close.
            guard let self, self.scheduled != nil else { return }
            self.scheduled = nil
            counter.increment()
            context.close(promise: nil)
        }
    }

    var isArmed: Bool { scheduled != nil }

    func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }
}
