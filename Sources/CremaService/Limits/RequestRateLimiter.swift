public import CremaCore
public import Foundation
import Synchronization

/// Each caller's token bucket (docs/limits.md): one per API key and one per customer, in this process. Memory is
/// bounded: a bucket that has refilled says nothing a new one would not, so full buckets are forgotten once
/// `capacity` callers are remembered, and if all of them are still spending, every bucket starts over.
public final class RequestRateLimiter: Sendable {
    /// Callers remembered before full buckets are forgotten.
    public let capacity: Int
    /// Each caller's bucket with the rate it was last taken under (tenants' rates differ, so fullness is judged by each).
    private let buckets = Mutex<[String: (bucket: TokenBucket, rate: RequestRate)]>([:])

    public init(capacity: Int = 100_000) {
        self.capacity = capacity
    }

    /// Takes one request for `caller` at `now` under `rate`.
    public func take(_ caller: String, rate: RequestRate, now: Date) -> TokenBucket.Decision {
        let seconds = now.timeIntervalSinceReferenceDate
        return buckets.withLock { buckets in
            if buckets[caller] == nil, buckets.count >= capacity {
                buckets = buckets.filter { !$0.value.bucket.isFull(rate: $0.value.rate, now: seconds) }
                if buckets.count >= capacity { buckets.removeAll(keepingCapacity: true) }
            }
            var bucket = buckets[caller]?.bucket ?? TokenBucket(rate: rate, now: seconds)
            let decision = bucket.take(rate: rate, now: seconds)
            buckets[caller] = (bucket, rate)
            return decision
        }
    }

    /// Callers remembered now.
    public var count: Int { buckets.withLock { $0.count } }
}
