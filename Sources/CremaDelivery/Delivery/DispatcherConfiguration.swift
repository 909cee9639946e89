public import CremaCore
public import CremaCredentials

/// How a dispatcher claims and sends: sizes, lease, wake-up fallback, retention, retries.
public struct DispatcherConfiguration: Sendable {
    /// The most pushes each worker has in flight; claims and records are batched up to it.
    public var batchSize: Int = 64
    /// Independent claim–send–record loops; SKIP LOCKED keeps them (and other processes) apart.
    public var workers: Int = 2
    /// How long a few finished sends wait for more before they are recorded (see `SendWindow`).
    public var recordLinger: Duration = .milliseconds(2)
    /// How long a claim holds a row; past it, a crashed dispatcher's rows are rescued.
    public var lease: Duration = .seconds(60)
    /// The poll fallback when no NOTIFY arrives.
    public var pollInterval: Duration = .seconds(1)
    /// How often expired leases are rescued and the outbox gauges refreshed.
    public var maintenanceInterval: Duration = .seconds(5)
    /// Finished rows older than this are pruned (the planner looks back 24 hours, so keep more).
    public var retention: Double = 72 * 3600
    public var retry = RetryPolicy()
    /// Makes each push's receipt as it is sent (`DeliveryReceipt`); nil (no `CREMA_MASTER_KEY`): bodies keep the
    /// placeholder, and no receipt can be posted.
    public var receiptKey: DeliveryReceiptKey?

    public init() {}
}
