public import CremaClock
import Foundation

extension CremaClock {
    /// The real time, and waits that `sleep` performs instead of taking time: the gate's tests move the other process on.
    public static func sleeping(_ sleep: @escaping @Sendable (Duration) async throws -> Void) -> CremaClock {
        CremaClock(now: { Date() }, sleep: sleep)
    }
}
