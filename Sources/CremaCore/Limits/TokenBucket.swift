/// One caller's request allowance: it refills at the rate's pace up to its burst, and each request takes one. Pure
/// arithmetic on the times it is given, so the limiter's behaviour is tested on a clock the test moves.
public struct TokenBucket: Sendable, Hashable {
    /// Requests the caller may send now (fractional while refilling).
    public private(set) var available: Double
    /// Seconds (on the caller's clock) when `available` was last brought up to date.
    public private(set) var updatedAt: Double

    /// What one request is told.
    public enum Decision: Sendable, Hashable {
        case allowed
        /// Refused; one request will be allowed after this many seconds (rounded up, at least 1, for `Retry-After`).
        case refused(retryAfter: Int)
    }

    /// A full bucket at `now`: a caller not seen before may send its whole burst.
    public init(rate: RequestRate, now: Double) {
        available = Double(rate.burst)
        updatedAt = now
    }

    /// Takes one request at `now` if one is available.
    public mutating func take(rate: RequestRate, now: Double) -> Decision {
        refill(rate: rate, now: now)
        if available >= 1 {
            available -= 1
            return .allowed
        }
        let wait = (1 - available) / Double(rate.perSecond)
        return .refused(retryAfter: max(1, Int(wait.rounded(.up))))
    }

    /// Whether the bucket is full at `now`: such a bucket says nothing a new one would not, and can be forgotten.
    public func isFull(rate: RequestRate, now: Double) -> Bool {
        var copy = self
        copy.refill(rate: rate, now: now)
        return copy.available >= Double(rate.burst)
    }

    private mutating func refill(rate: RequestRate, now: Double) {
        // A clock that went back refills nothing (and does not spend).
        let elapsed = max(0, now - updatedAt)
        available = min(Double(rate.burst), available + elapsed * Double(rate.perSecond))
        updatedAt = max(updatedAt, now)
    }
}
