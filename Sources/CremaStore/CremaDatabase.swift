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

    public init(pool: PostgresPool) {
        self.pool = pool
        stores = StoreRepository(pool: pool)
        orders = OrderRepository(pool: pool)
        tokens = TokenRepository(pool: pool)
        stream = StreamRepository(pool: pool)
        deliveries = DeliveryRepository(pool: pool)
        idempotency = IdempotencyRepository(pool: pool)
        customers = CustomerRepository(pool: pool)
    }

    /// Runs one order command in a transaction: committed when `body` returns, rolled back when it throws.
    public func command<T: Sendable>(_ body: (OrderTransaction) async throws -> sending T) async throws(StoreError) -> T {
        try await StoreError.translating {
            try await pool.withTransaction { connection in try await body(OrderTransaction(connection: connection)) }
        }
    }
}
