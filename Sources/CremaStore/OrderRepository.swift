public import CremaAPNsProtocol
public import CremaCore
public import Foundation
public import CremaPostgres

/// An order with its full event history and its stored Live Activity projection.
public struct OrderDetail: Sendable, Hashable {
    public var order: Order
    public var events: [RecordedEvent]
    /// The `content-state` written with the latest event (nil only for rows from before projections existed).
    public var projection: JSONValue?
}

/// One page of a store's orders, oldest first, and the cursor for the next page (nil at the end).
public struct OrderPage: Sendable, Hashable {
    public var orders: [Order]
    public var nextCursor: String?
}

/// A store's open orders grouped by state, each group oldest first.
public struct Board: Sendable, Hashable {
    public var store: Store
    public var columns: [OrderState: [Order]]
}

/// Orders as they are read back: one with its history, a store's pages, a store's board.
public struct OrderRepository: Repository {
    public let pool: PostgresPool
    /// Where the reads that may come from a standby go (`CREMA_DATABASE_READ_URL`).
    public let reads: StandbyReads

    public init(pool: PostgresPool, reads: StandbyReads? = nil) {
        self.pool = pool
        self.reads = reads ?? StandbyReads(primary: pool)
    }

    /// The most open orders a board shows; a store with more is far past any counter screen.
    public static let boardLimit = 500
    public static let maxPageSize = 200

    /// The order and its history, read in one snapshot so `version` always matches the events.
    public func order(id: UUID, in scope: TenantScope) async throws(StoreError) -> OrderDetail? {
        try await database {
            try await pool.withTransaction(isolation: .repeatableRead) { connection in
                let rows = try await connection.query(
                    "SELECT \(unescaped: OrderRow.columns), projection::text AS projection FROM orders WHERE \(scope.sql) AND order_id = \(id)")
                guard let row = rows.first else { return nil }
                let order = try OrderRow.order(from: row)
                let projection = try row.decode("projection", as: PostgresJSON?.self)?.decode(JSONValue.self)
                let events = try await connection.query(
                    """
                    SELECT version, event_type, actor_role, occurred_at, data::text AS data FROM order_events
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(order.storeID) AND order_id = \(id) ORDER BY version
                    """
                ).map(OrderRow.event(from:))
                return OrderDetail(order: order, events: events, projection: projection)
            }
        }
    }

    /// The order's last change as its event found it, read in one snapshot: the order, the order before the event
    /// (its history replayed through `OrderStateMachine.previous`), the event, and the planning inputs the event's
    /// transaction read (`OrderTransaction.openOrder`) as they are now, less what that event itself wrote
    /// (`DeliveryPlanning.selectColumns(now:beforeLastChange:)`). Nothing is locked or written. Nil when no order with
    /// this id is in `scope`.
    public func lastChange(id: UUID, in scope: TenantScope, defaultBundleID: String?, now: Date) async throws(StoreError) -> LastChange? {
        try await database {
            try await pool.withTransaction(isolation: .repeatableRead) { connection in
                let rows = try await connection.query(
                    OrderStatements.LastChangeRead(scope: scope, id: id, defaultBundleID: defaultBundleID, now: now).query)
                guard let row = rows.first else { return nil }
                let order = try OrderRow.order(from: row)
                let events = try await connection.query(
                    """
                    SELECT version, event_type, actor_role, occurred_at, data::text AS data FROM order_events
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(order.storeID) AND order_id = \(id) ORDER BY version
                    """
                ).map(OrderRow.event(from:))
                let later = events.dropFirst().compactMap { recorded in EventData.event(recorded).map { (event: $0, at: recorded.occurredAt) } }
                let previous = events.first.flatMap { EventData.eta($0.data) }.flatMap { placedETA in
                    OrderStateMachine.previous(of: order, placedETA: placedETA, events: later)
                }
                return LastChange(
                    order: order, previous: previous, event: events.last?.type ?? .placed,
                    inputs: OrderTransaction.PlanningInputs(
                        storeName: try row.decode("store_name"), timezone: try row.decode("store_timezone"),
                        targets: try DeliveryPlanning.targets(from: row), history: try DeliveryPlanning.history(from: row)))
            }
        }
    }

    /// A page of a store's orders in placement order, optionally in one state. The cursor is opaque.
    public func orders(store: String, in scope: TenantScope, state: OrderState?, limit: Int, cursor: String?) async throws(StoreError) -> OrderPage {
        let position: OrderCursor?
        if let cursor {
            guard let decoded = OrderCursor(encoded: cursor) else { throw .invalidCursor }
            position = decoded
        } else {
            position = nil
        }
        let limit = min(max(limit, 1), Self.maxPageSize)
        return try await database {
            try await reads.withConnection { connection in
                guard try await !connection.query("SELECT 1 FROM stores WHERE \(scope.sql) AND store_id = \(store)").isEmpty else {
                    throw StoreError.unknownStore(store)
                }
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: OrderRow.columns) FROM orders
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(store)
                      AND (\(state?.rawValue)::text IS NULL OR state = \(state?.rawValue))
                      AND (\(position?.placedAt)::timestamptz IS NULL OR (placed_at, order_id) > (\(position?.placedAt), \(position?.orderID)))
                    ORDER BY placed_at, order_id
                    LIMIT \(limit + 1)
                    """)
                var orders = try rows.map(OrderRow.order(from:))
                var next: String?
                if orders.count > limit {
                    orders.removeLast()
                    next = orders.last.map { OrderCursor(placedAt: $0.placedAt, orderID: $0.id).encoded }
                }
                return OrderPage(orders: orders, nextCursor: next)
            }
        }
    }

    public func board(store id: String, in scope: TenantScope) async throws(StoreError) -> Board {
        try await database {
            try await reads.withConnection { connection in
                let stores = try await connection.query(
                    "SELECT \(unescaped: StoreRepository.columns) FROM stores WHERE \(scope.sql) AND store_id = \(id)")
                guard let storeRow = stores.first else { throw StoreError.unknownStore(id) }
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: OrderRow.columns) FROM orders
                    WHERE tenant_id = \(scope.tenant) AND store_id = \(id) AND is_open
                    ORDER BY placed_at, order_id LIMIT \(Self.boardLimit)
                    """)
                var columns = Dictionary(uniqueKeysWithValues: OrderState.open.map { ($0, [Order]()) })
                for order in try rows.map(OrderRow.order(from:)) { columns[order.state, default: []].append(order) }
                return Board(store: try StoreRepository.store(from: storeRow), columns: columns)
            }
        }
    }
}

/// A keyset position, `(placed_at, order_id)`, encoded as base64url text.
struct OrderCursor {
    var placedAt: Date
    var orderID: UUID

    var encoded: String {
        let micros = Int64((placedAt.timeIntervalSince1970 * 1_000_000).rounded())
        return Base64URL.encode(Data("\(micros)/\(orderID.uuidString.lowercased())".utf8))
    }

    init(placedAt: Date, orderID: UUID) {
        self.placedAt = placedAt
        self.orderID = orderID
    }

    init?(encoded: String) {
        guard encoded.utf8.count <= 100, let data = Base64URL.decode(encoded) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: "/")
        // Only positions PostgreSQL can hold (years 1–9999): anything else was not made by this API.
        guard parts.count == 2, let micros = Int64(parts[0]), (-62_135_596_800_000_000...253_402_300_799_999_999).contains(micros),
            let id = UUID(uuidString: String(parts[1]))
        else { return nil }
        self.placedAt = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        self.orderID = id
    }
}
