import CremaClock
import Foundation

/// Wakes idle dispatcher workers: rung on every order change and every finished send, waited on with a timeout (the
/// poll fallback). A ring with nobody waiting is remembered once, so a notification that arrives mid-batch is never
/// lost.
actor Doorbell {
    /// Why a wait ended.
    enum Wake: Sendable, Equatable {
        /// Rung (or cancelled): there is news.
        case rung
        /// Nothing rang for the whole timeout: the poll fallback.
        case timedOut
    }


    /// Times the waits: the dispatcher's clock.
    private let clock: CremaClock
    private struct Waiter {
        var continuation: CheckedContinuation<Wake, Never>
        var timer: Task<Void, Never>
    }

    private var waiters: [Int: Waiter] = [:]
    private var next = 0
    private var rung = false

    init(clock: CremaClock) {
        self.clock = clock
    }

    func ring() {
        guard !waiters.isEmpty else {
            rung = true
            return
        }
        let woken = waiters
        waiters = [:]
        for waiter in woken.values {
            waiter.timer.cancel()
            waiter.continuation.resume(returning: .rung)
        }
    }

    /// Returns when rung, `timeout` after `start` (by default now), or when the task is cancelled.
    @discardableResult
    func wait(timeout: Duration, from start: Date? = nil) async -> Wake {
        if rung {
            rung = false
            return .rung
        }
        next += 1
        let id = next
        // The deadline is fixed here, not when the timer's task first runs: on a clock a test moves, a task that starts
        // after the move would otherwise wait from the new time.
        let deadline = (start ?? clock.now).addingTimeInterval(timeout.timeInterval)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Registered in the same turn of this actor as the check above: no ring can slip in between.
                guard !Task.isCancelled else {
                    continuation.resume(returning: .rung)
                    return
                }
                let clock = self.clock
                let timer = Task {
                    try? await clock.sleep(until: deadline)
                    self.release(id, as: .timedOut)
                }
                waiters[id] = Waiter(continuation: continuation, timer: timer)
            }
        } onCancel: {
            Task { await self.release(id, as: .rung) }
        }
    }

    private func release(_ id: Int, as wake: Wake) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        waiter.timer.cancel()
        waiter.continuation.resume(returning: wake)
    }
}
