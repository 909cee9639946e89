// swift-tools-version:6.1
import PackageDescription

// Bench only (issue #35): the pure core's cost per event -- transition, projection, delivery plan -- measured with
// ordo-one/benchmark (time and allocations) and counted in instructions under callgrind (bench/core.sh). Kept out of
// the main package so Crema gains no dependency; it names only the CremaCore product, so no server code is built.
let package = Package(
    name: "core-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `crema` is a link to the repository root (../..), so the package is named the same in every clone.
        .package(path: "crema"),
        // The mirror's ordo-one/benchmark needs this trait named on Swift 6.3 (the ARC runtime interposer is not mirrored).
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // One event's work as the service does it, without I/O, and the lifecycle fixture it runs on.
        .target(
            name: "CoreWorkload",
            dependencies: [
                .product(name: "CremaCore", package: "crema"),
                // Already in CremaCore's closure: named for the push types and body sizes the fixture checks.
                .product(name: "CremaAPNsProtocol", package: "crema"),
            ]
        ),
        // The ordo-one/benchmark suite: time per event (p50/p99) and allocations per event.
        .executableTarget(
            name: "CoreBench",
            dependencies: [
                "CoreWorkload",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/CoreBench",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The same lifecycle run a given number of times and nothing else: what callgrind counts instructions of.
        .executableTarget(name: "CoreCount", dependencies: ["CoreWorkload"]),
    ]
)
