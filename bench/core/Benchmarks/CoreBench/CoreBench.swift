import Benchmark
import CoreWorkload

// The pure core per event (issue #35, docs/design.md §8: ≤ 20 µs): transition, stored projection and delivery plan,
// as OrderService and OrderTransaction run them for one event, on the 24-event lifecycle of `Lifecycle` (en, es-MX,
// ja-JP; picked up and canceled). Every iteration checks what it produced against the fixture's first run.
let benchmarks: @Sendable () -> Void = {
    let lifecycle = Lifecycle()
    // CPU time is left out: Linux reads it in clock ticks (10 ms), far coarser than one event.
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal, .mallocBytesCount, .throughput]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics, timeUnits: .microseconds, warmupIterations: 50, maxDuration: .seconds(5), maxIterations: 1_000_000)

    // One event per iteration, the 24 events in turn (the closure runs once per iteration, so the turn is kept
    // outside it): its p50/p99 are per event, across the mix.
    let cursor = Cursor(count: lifecycle.eventCount)
    Benchmark("event") { benchmark in
        for _ in benchmark.scaledIterations {
            let index = cursor.next()
            let result = CoreEvent.result(lifecycle.steps[index])
            if result != lifecycle.expected[index] {
                benchmark.error("\(lifecycle.steps[index].name): gave \(result), expected \(lifecycle.expected[index])")
                return
            }
            blackHole(result)
        }
    }

    // The whole lifecycle per iteration (24 events): divided by 24, its time and allocations are the mean per event.
    Benchmark("lifecycle-24-events") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(lifecycle.runChecked())
        }
    }
}

/// Which of the lifecycle's events the next iteration runs. Benchmarks run one at a time, on one thread.
final class Cursor: @unchecked Sendable {
    let count: Int
    var index = 0

    init(count: Int) { self.count = count }

    func next() -> Int {
        defer { index = index == count - 1 ? 0 : index + 1 }
        return index
    }
}
