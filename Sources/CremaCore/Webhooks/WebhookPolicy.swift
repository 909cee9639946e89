/// How webhook deliveries are retried and bounded: documented numbers a receiver can plan for (docs/webhooks.md).
public struct WebhookPolicy: Sendable, Hashable {
    /// 10 attempts over about an hour and a half (10 s doubling to a 1 h cap, jittered), then dead.
    public var retry: RetryPolicy
    /// The most requests in flight to one endpoint, so a slow receiver holds only its own deliveries.
    public var inFlightPerEndpoint: Int
    /// How long one request may take before it counts as failed.
    public var requestTimeout: Double
    /// How long a claim holds a delivery; past it (a crashed process), the delivery is tried again. Three request
    /// timeouts: an attempt, DNS included, ends within one, and recording its outcome must not race the lease.
    public var lease: Double
    /// A receiver refuses signatures older than this (documented for receivers; Crema signs at send time).
    public static let replayWindow: Double = 300

    public init(retry: RetryPolicy = RetryPolicy(base: 10, cap: 3600, maxAttempts: 10), inFlightPerEndpoint: Int = 8,
                requestTimeout: Double = 10, lease: Double = 30) {
        self.retry = retry
        self.inFlightPerEndpoint = inFlightPerEndpoint
        self.requestTimeout = requestTimeout
        self.lease = lease
    }
}
