import CoreWorkload
import Foundation

// Runs the 24-event lifecycle N times (first argument, default 1), each step checked, and nothing else, so that
// callgrind's instruction count of N = a and N = b differ by (b - a) lifecycles exactly: bench/core.sh divides that
// difference by the events it ran. The fixture is built (and run once) before the loop in both, so it cancels out.
// `CoreCount describe` prints what each of the 24 events produces instead.
let argument = CommandLine.arguments.dropFirst().first
let lifecycle = Lifecycle()
if argument == "describe" {
    for (step, result) in zip(lifecycle.steps, lifecycle.expected) { print("\(step.name): \(result)") }
    exit(0)
}
let rounds = argument.flatMap { Int($0) } ?? 1
var bytes = 0
for _ in 0..<rounds {
    bytes &+= lifecycle.runChecked()
}
guard bytes == lifecycle.expectedBytes &* rounds else {
    FileHandle.standardError.write(Data("produced \(bytes) bytes, expected \(lifecycle.expectedBytes * rounds)\n".utf8))
    exit(1)
}
print("events \(lifecycle.eventCount * rounds) rounds \(rounds) bytes \(bytes)")
