@testable import CremaDelivery
import CremaTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The upkeep both dispatchers share, on a clock the test moves: each tick rescues and gauges, prunes come ten minutes
/// of the worker's clock apart, and a failing tick does not end the loop. Two minutes of real time, as every suite: its
/// twelve rounds each wait for the worker to be scheduled again, and in the whole suite (900 tests sharing two threads)
/// that took more than the one minute it had, in every full run of 2026-11-29, while alone it takes 20 ms.
@Suite(.timeLimit(.minutes(2))) struct OutboxMaintenanceTests {
    final class Counts: Sendable {
        let state = Mutex((rescues: 0, gauges: 0, prunes: 0))
        var value: (rescues: Int, gauges: Int, prunes: Int) { state.withLock { $0 } }
    }

    struct Refused: Error {}

    @Test("a tick that fails is followed by the next, and prunes come ten minutes of the worker's clock apart")
    func ticksOnTheWorkersClock() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let counts = Counts()
        let maintenance = OutboxMaintenance(rows: "test rows", interval: .seconds(60), clock: clock.crema, logger: Logger(label: "test"))
        let running = Task {
            await maintenance.run(
                rescue: { _ in
                    let first = counts.state.withLock { state in
                        state.rescues += 1
                        return state.rescues == 1
                    }
                    if first { throw Refused() }
                    return 0
                },
                gauge: { _ in counts.state.withLock { $0.gauges += 1 } },
                prune: { _ in
                    counts.state.withLock { $0.prunes += 1 }
                    return 0
                })
        }
        defer { running.cancel() }
        // The first tick failed at its rescue: nothing gauged or pruned, and the loop sleeps again.
        #expect(await clock.waitForSleeps(1))
        #expect(counts.value == (1, 0, 0))
        // The next tick works, and prunes (nothing was pruned yet).
        await clock.advance(60)
        #expect(await clock.waitForSleeps(2))
        #expect(counts.value == (2, 1, 1))
        // Nine more ticks, up to 540 s after that prune: gauged each time, not pruned.
        for tick in 3...11 {
            await clock.advance(60)
            #expect(await clock.waitForSleeps(tick))
        }
        #expect(counts.value == (11, 10, 1))
        // Ten minutes after the prune, the next one.
        await clock.advance(60)
        #expect(await clock.waitForSleeps(12))
        #expect(counts.value == (12, 11, 2))
    }
}
