/// When to try a push again after a transient failure: capped exponential backoff with full jitter, never
/// sooner than the server's `Retry-After`, and a bounded number of attempts so a failing APNs never turns
/// into a retry storm.
public struct RetryPolicy: Sendable, Hashable {
    /// The first retry waits up to this long; each further one doubles it.
    public var base: Double
    /// No wait is longer than this (before `Retry-After`, which always wins).
    public var cap: Double
    /// Attempts in all, the first included; after the last one the push is dead-lettered.
    public var maxAttempts: Int

    /// The longest `Retry-After` taken at its word.
    public static let longestRetryAfter: Double = 3600

    public init(base: Double = 2, cap: Double = 600, maxAttempts: Int = 8) {
        self.base = base
        self.cap = cap
        self.maxAttempts = maxAttempts
    }

    /// The wait in seconds after attempt number `attempt` (1-based) failed; `random` in 0..<1 picks the jitter
    /// (injected, so tests choose it). Nil when no attempt is left.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?, random: Double) -> Double? {
        guard attempt < maxAttempts else { return nil }
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(cap, base * Double(1 << exponent))
        // Full jitter, but at least half the base so a burst of failures does not come back all at once.
        let jittered = max(base / 2, ceiling * min(max(random, 0), 1))
        // A server's Retry-After is honoured up to an hour; anything longer (or not a number) is not a plan.
        let asked = retryAfter.flatMap { $0.isFinite ? min($0, Self.longestRetryAfter) : nil } ?? 0
        return max(jittered, asked)
    }
}
