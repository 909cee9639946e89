import Benchmark
import CoreWorkload

// The pure core per event (issue #35, docs/design.md §8: ≤ 20 µs): transition, stored projection and delivery plan,
// as OrderService and OrderTransaction run them for one event, on the 24-event lifecycle of `Lifecycle` (en, es-MX,
// ja-JP; picked up and canceled). Every iteration checks what it produced against the fixture's first run.
let benchmarks: @Sendable () -> Void = {
    let lifecycle = Lifecycle()
    let metrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .mallocCountTotal, .mallocBytesCount, .throughput]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics, timeUnits: .microseconds, warmupIterations: 50, maxDuration: .seconds(5), maxIterations: 1_000_000)

    // One event per iteration, the 24 events in turn: its p50/p99 are per event, across the mix.
    Benchmark("event") { benchmark in
        let steps = lifecycle.steps
        let expected = lifecycle.expected
        var index = 0
        for _ in benchmark.scaledIterations {
            let result = CoreEvent.result(steps[index])
            if result != expected[index] {
                benchmark.error("\(steps[index].name): gave \(result), expected \(expected[index])")
                return
            }
            blackHole(result)
            index = index == steps.count - 1 ? 0 : index + 1
        }
    }

    // The whole lifecycle per iteration (24 events): divided by 24, its time and allocations are the mean per event.
    Benchmark("lifecycle-24-events") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(lifecycle.runChecked())
        }
    }
}
