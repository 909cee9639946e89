public import CremaAPNsProtocol
public import CremaCore
public import CremaClock
public import CremaPostgres
public import Foundation

/// An order as its customer reads it: the order and its stored Live Activity projection.
public struct CustomerOrder: Sendable, Hashable {
    public var order: Order
    public var projection: JSONValue?
}

/// The last Live Activity push APNs accepted for an order, as the outbox row holds it: the body byte for byte.
public struct DeliveredActivityPush: Sendable, Hashable {
    /// `start`, `update` or `end`.
    public var event: String
    public var body: String
    public var sentAt: Date
}

/// The customer's own reads (`/v1/me`). Every query is scoped by tenant and `customer_ref` in SQL, so another
/// customer's order is simply not found: the caller cannot tell it from one that does not exist.
public struct CustomerRepository: Repository {
    public let pool: PostgresPool
    /// Where the reads that may come from a standby go (`CREMA_DATABASE_READ_URL`).
    public let reads: StandbyReads

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, reads: StandbyReads? = nil, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
        self.reads = reads ?? StandbyReads(primary: pool)
    }

    /// How long a finished order stays in the customer's list.
    public static let recentWindow: TimeInterval = 24 * 3600
    public static let listLimit = 50

    /// Open orders, then those finished within `recentWindow`, each newest first.
    public func orders(customerRef: String, tenant: String) async throws(StoreError) -> [CustomerOrder] {
        try await database {
            try await reads.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(unescaped: OrderRow.columns), projection::text AS projection FROM orders
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef)
                      AND (is_open OR updated_at >= \(clock.now.addingTimeInterval(-Self.recentWindow)))
                    -- Open orders first, so the cap can only ever drop finished ones.
                    ORDER BY is_open DESC, placed_at DESC, order_id DESC
                    LIMIT \(Self.listLimit)
                    """
                ).map(Self.customerOrder(from:))
            }
        }
    }

    /// One of the customer's orders, its last accepted Live Activity push, and the `frequent_updates` of its Live
    /// Activity registration (nil when none is registered), read in one snapshot; nil when no order with this id
    /// belongs to this customer.
    public func order(
        customerRef: String, tenant: String, id: UUID
    ) async throws(StoreError) -> (order: CustomerOrder, push: DeliveredActivityPush?, frequentUpdates: Bool?)? {
        try await database {
            try await reads.withTransaction(isolation: .repeatableRead) { connection in
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: OrderRow.columns), projection::text AS projection,
                           (SELECT p.frequent_updates FROM push_targets p
                            WHERE p.tenant_id = orders.tenant_id AND p.store_id = orders.store_id AND p.order_id = orders.order_id
                              AND p.retired_at IS NULL) AS frequent_updates
                    FROM orders
                    WHERE tenant_id = \(tenant) AND order_id = \(id) AND customer_ref = \(customerRef)
                    """)
                guard let row = rows.first else { return nil }
                let order = try Self.customerOrder(from: row)
                let frequentUpdates = try row.decode("frequent_updates", as: Bool?.self)
                // The push ActivityKit shows is the one with the highest aps.timestamp among those delivered.
                let pushes = try await connection.query(
                    """
                    SELECT la_event, body, sent_at FROM delivery_outbox
                    WHERE tenant_id = \(tenant) AND store_id = \(order.order.storeID) AND order_id = \(id) AND state = 'sent' AND push_type = 'liveactivity'
                      AND body IS NOT NULL AND sent_at IS NOT NULL
                    ORDER BY apns_timestamp DESC NULLS LAST, sent_at DESC, delivery_id DESC
                    LIMIT 1
                    """)
                let push = try pushes.first.map { row in
                    DeliveredActivityPush(
                        event: try row.decode("la_event", as: String?.self) ?? "update", body: try row.decode("body"),
                        sentAt: try row.decode("sent_at"))
                }
                return (order, push, frequentUpdates)
            }
        }
    }

    static func customerOrder(from row: PostgresRow) throws -> CustomerOrder {
        CustomerOrder(
            order: try OrderRow.order(from: row),
            projection: try row.decode("projection", as: PostgresJSON?.self)?.decode(JSONValue.self))
    }
}
