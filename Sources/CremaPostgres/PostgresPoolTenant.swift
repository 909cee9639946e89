/// Whom a lease is for, so that the pool can share its connections when callers compete: a tenant holds at most its
/// share of the pool while another waits, and waiters take turns by tenant (``PostgresPoolStateMachine``). The
/// driver knows nothing of tenants beyond a name and a weight; what they mean is the caller's (docs/limits.md).
public struct PostgresPoolTenant: Sendable, Hashable {
    public var name: String
    /// The tenant's weight against the others that hold or wait: its share of the pool is
    /// `maxConnections × weight / (the sum of their weights)`. At least 1.
    public var weight: Int

    public init(_ name: String, weight: Int = 1) {
        self.name = name
        self.weight = max(1, weight)
    }
}
