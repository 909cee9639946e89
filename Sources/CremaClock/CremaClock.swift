public import Foundation

/// The one clock Crema reads and waits on, passed down from the composition root, so tests can run the workers on
/// virtual time instead of waiting for it. `now` is the wall time the domain records; `sleep` is how a loop waits.
public struct CremaClock: Sendable {
    private let read: @Sendable () -> Date
    private let wait: @Sendable (Duration) async throws -> Void

    /// A clock from its two halves; `.system` is the real one, a test support target builds a virtual one.
    public init(now: @escaping @Sendable () -> Date, sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.read = now
        self.wait = sleep
    }

    /// The wall time now.
    public var now: Date { read() }

    /// Suspends for `duration` of this clock's time; throws `CancellationError` if the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await wait(duration)
    }

    /// Suspends until `deadline` on this clock (returns at once if it has passed).
    public func sleep(until deadline: Date) async throws {
        let left = deadline.timeIntervalSince(now)
        guard left > 0 else { return try Task.checkCancellation() }
        try await wait(.nanoseconds(Int64((left * 1e9).rounded(.up))))
    }

    /// The real clock: the machine's wall time and a monotonic sleep. The only `Date()` in Crema's libraries, and
    /// their only real sleep but for two I/O deadlines (the pool's acquire timeout, a webhook attempt's deadline).
    public static let system = CremaClock(now: { Date() }, sleep: { try await Task.sleep(for: $0, clock: .continuous) })
}
