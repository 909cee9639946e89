public import CremaClock
public import Foundation
import Clocks
import Synchronization

/// A clock tests move by hand, so code that reads the time or sleeps runs at the instants the test chooses and no
/// test waits for time to pass. Its `crema` is the `CremaClock` handed to the code under test.
///
/// The time jumps: `advance` sets the new time first, then resumes every sleep due by then, in deadline order, each
/// once (swift-clocks' `TestClock` underneath). Work woken by an advance reads the new time, and a loop that sleeps
/// again sleeps from it, so an hour's advance is one round of each loop, not an hour of rounds racing the work still
/// in flight (whose leases would run out under it).
public final class TestClock: Sendable {
    private let start: Date
    private let virtual: Clocks.TestClock<Duration>
    /// How far the test has moved the time; sleeps begun so far, and the tests waiting for a count of them (a test
    /// knows a worker has finished a round when it is back asleep).
    private let state: Mutex<State>

    private struct State {
        var elapsed: Duration = .zero
        var sleepsBegun = 0
        var waiters: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var nextWaiter = 0
    }

    public init(_ start: Date) {
        self.start = start
        self.virtual = Clocks.TestClock()
        self.state = Mutex(State())
    }

    /// The virtual wall time: the start plus how far the test has advanced.
    public var now: Date {
        start.addingTimeInterval(Self.seconds(state.withLock { $0.elapsed }))
    }

    /// The `CremaClock` the code under test reads and sleeps on.
    public var crema: CremaClock {
        CremaClock(now: { self.now }, sleep: { try await self.sleep(for: $0) })
    }

    /// Moves the time on by `seconds`, then resumes every sleep due by then.
    public func advance(_ seconds: TimeInterval) async {
        let target = state.withLock { state in
            state.elapsed += .seconds(seconds)
            return state.elapsed
        }
        await virtual.advance(to: .init(offset: target))
    }

    /// The number of sleeps begun on this clock so far.
    public var sleepsBegun: Int { state.withLock { $0.sleepsBegun } }

    /// True once `count` sleeps have begun on this clock, false if they have not within `limit` of real time (a loop
    /// that never sleeps on this clock fails the test instead of hanging it): after an `advance`, waiting for one more
    /// sleep than before it is how a test knows a woken loop has done its round and parked again.
    public func waitForSleeps(_ count: Int, within limit: Duration = .seconds(30)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.sleepsReached(count)
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Returns once `count` sleeps have begun, or when the task is cancelled.
    private func sleepsReached(_ count: Int) async {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.sleepsBegun >= count || Task.isCancelled { return true }
                    state.waiters.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                state.waiters.firstIndex { $0.id == id }.map { state.waiters.remove(at: $0).continuation }
            }
            waiter?.resume()
        }
    }

    private func sleep(for duration: Duration) async throws {
        // Nothing to wait for (a linger of zero): like the real clock, it returns at once rather than at an advance.
        guard duration > .zero else { return try Task.checkCancellation() }
        let (deadline, ready) = state.withLock { state in
            state.sleepsBegun += 1
            let begun = state.sleepsBegun
            let ready = state.waiters.filter { $0.count <= begun }.map(\.continuation)
            state.waiters.removeAll { $0.count <= begun }
            return (state.elapsed + duration, ready)
        }
        ready.forEach { $0.resume() }
        // A nanosecond early: the test may advance to the deadline after this sleep was counted (a waiting test resumes
        // above) but before the virtual clock holds it, and that clock parks a sleep whose deadline equals its time
        // rather than returning; one already past returns at once. Found as a loop left asleep after an advance, in
        // full suites on a loaded machine (OutboxMaintenanceTests).
        try await virtual.sleep(until: .init(offset: deadline - .nanoseconds(1)))
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

extension CremaClock {
    /// A clock that reads `now` and sleeps as the real one does: for code that only needs the time fixed or moved.
    public static func reading(_ now: @escaping @Sendable () -> Date) -> CremaClock {
        CremaClock(now: now, sleep: { try await CremaClock.system.sleep(for: $0) })
    }

    /// The real clock read `seconds` ahead, sleeping as the real one does: for work run once as if at a later hour.
    public static func system(shiftedBy seconds: TimeInterval) -> CremaClock {
        reading { CremaClock.system.now.addingTimeInterval(seconds) }
    }
}
