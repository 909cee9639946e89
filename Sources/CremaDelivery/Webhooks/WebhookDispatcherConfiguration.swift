public import CremaCore

/// How the webhook dispatcher claims and sends (the receiver-facing numbers are `WebhookPolicy`'s).
public struct WebhookDispatcherConfiguration: Sendable {
    public var policy = WebhookPolicy()
    /// The most requests in flight in this process, over all endpoints.
    public var capacity: Int = 64
    /// The most requests in flight for one tenant, over every process (docs/limits.md): half the capacity, so one
    /// tenant's receivers that never answer leave the other half to everyone else.
    public var tenantShare: Int = 32
    /// The wake-up fallback when no order change arrives.
    public var pollInterval: Duration = .seconds(1)
    /// How often expired leases are rescued and gauges refreshed.
    public var maintenanceInterval: Duration = .seconds(5)
    /// Sent deliveries older than this are pruned (dead ones stay for replay).
    public var retention: Double = 72 * 3600
    /// How long establishing a connection may take (within the request timeout).
    public var connectTimeout: Double = 5
    /// A PEM file of extra CAs to trust for HTTPS receivers (`CREMA_WEBHOOK_CA_FILE`), beside the system's.
    public var trustRootsPEMFile: String?
    /// The retry jitter's source, in 0..<1.
    public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    public init() {}
}
