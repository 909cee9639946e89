public import CremaClock
public import CremaCore
public import CremaPostgres

/// Crema's data in PostgreSQL: one repository per aggregate for reads and housekeeping, and `command` for
/// the one-transaction writes of order commands. No SQL lives outside this module.
public struct CremaDatabase: Sendable {
    public let pool: PostgresPool
    public let stores: StoreRepository
    public let orders: OrderRepository
    public let tokens: TokenRepository
    public let stream: StreamRepository
    public let deliveries: DeliveryRepository
    public let idempotency: IdempotencyRepository
    /// The customer's own reads (`/v1/me`), scoped by customer ref.
    public let customers: CustomerRepository
    public let tenants: TenantRepository
    public let apnsKeys: APNsKeyRepository
    public let apiKeys: APIKeyRepository
    public let customerTokenSettings: CustomerTokenSettingsRepository
    /// Expiry, retention and erasure (docs/data-lifecycle.md).
    public let lifecycle: LifecycleRepository
    /// Webhook endpoints and their outbox (docs/webhooks.md).
    public let webhooks: WebhookRepository
    /// Each tenant's own load limits (docs/limits.md).
    public let limits: TenantLimitsRepository
    /// Stores' broadcast channels, their waiting boards and announcements (docs/broadcast.md).
    public let broadcasts: BroadcastRepository
    /// What phones said they received, and what Crema infers (`delivery_receipts`).
    public let receipts: ReceiptRepository
    /// Told which stores each committed command changed; nil (tools such as `crema migrate`) tells nobody.
    public let changes: ChangeFeed?
    /// Where the board, the stream, the order lists and the customer's reads go: a standby when one is configured.
    public let reads: StandbyReads

    /// The process's one clock, the time every repository writes and compares in SQL (bound as a parameter, never the
    /// database's `now()`), so a time Crema reports and a time it stores are the same clock's.
    public let clock: CremaClock

    /// `reads` nil: every read on `pool`.
    public init(pool: PostgresPool, reads: StandbyReads? = nil, changes: ChangeFeed? = nil, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
        self.changes = changes
        let reads = reads ?? StandbyReads(primary: pool)
        self.reads = reads
        stores = StoreRepository(pool: pool, clock: clock)
        orders = OrderRepository(pool: pool, reads: reads)
        tokens = TokenRepository(pool: pool, clock: clock)
        stream = StreamRepository(pool: pool, reads: reads, clock: clock)
        deliveries = DeliveryRepository(pool: pool)
        idempotency = IdempotencyRepository(pool: pool, clock: clock)
        customers = CustomerRepository(pool: pool, reads: reads, clock: clock)
        tenants = TenantRepository(pool: pool, clock: clock)
        apnsKeys = APNsKeyRepository(pool: pool, clock: clock)
        apiKeys = APIKeyRepository(pool: pool, clock: clock)
        customerTokenSettings = CustomerTokenSettingsRepository(pool: pool, clock: clock)
        lifecycle = LifecycleRepository(pool: pool)
        webhooks = WebhookRepository(pool: pool)
        limits = TenantLimitsRepository(pool: pool)
        broadcasts = BroadcastRepository(pool: pool)
        receipts = ReceiptRepository(pool: pool, clock: clock)
    }

    /// Runs one order command within `scope` in a transaction: committed when `body` returns, rolled back when it
    /// throws. `defaultBundleID` is the app of the default tenant's tokens registered without one. Once committed,
    /// the stores it changed go to `changes`. Its connection is leased in the tenant's `share` of the pool, so a tenant
    /// busy with commands waits its turn behind the others' instead of holding every connection (docs/limits.md). Runs
    /// `body` a second time when its write named a webhook endpoint deleted since it read them.
    public func command<T: Sendable>(
        in scope: TenantScope, share: Int = 1, defaultBundleID: String?, _ body: (OrderTransaction) async throws -> sending T
    ) async throws(StoreError) -> T {
        func run() async throws(StoreError) -> T {
            let changed = PendingChanges()
            let value = try await StoreError.translating {
                try await pool.withTransaction(for: PostgresPoolTenant(scope.tenant, weight: share)) { connection in
                    try await body(OrderTransaction(connection: connection, scope: scope, defaultBundleID: defaultBundleID, changed: changed))
                }
            }
            changes?.committed(changed.all, queued: changed.queued)
            return value
        }
        do {
            return try await run()
        } catch .database(let error) where WebhookOutbox.endpointGone(error) {
            // Nothing was committed, and the second reading finds the endpoints as they are.
            return try await run()
        }
    }
}
