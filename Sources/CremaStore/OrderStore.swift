public import CremaCore
public import CremaPostgres
public import Foundation
import Logging

/// Crema's orders in PostgreSQL. Every command is one transaction: lock, idempotency key, state-machine
/// check (pure core), event append, order update, stored answer and `pg_notify`, all or nothing.
public struct OrderStore: Sendable {
    /// The `pg_notify` channel that carries `{"store_id","order_id","version","state"}` after each change.
    public static let changeChannel = "crema_order_changes"
    /// How long an Idempotency-Key keeps its first answer.
    public static let idempotencyWindow: TimeInterval = 24 * 60 * 60
    /// The bundle ID used with the built-in simulator when `CREMA_APNS_TOPIC` is not set.
    public static let defaultBundleID = "cafe.crema.example"

    public let pool: PostgresPool
    /// The numbers and bundle ID the delivery planner uses for every change.
    public let deliveryPolicy: DeliveryPolicy
    private let now: @Sendable () -> Date
    private let makeID: @Sendable () -> UUID

    /// - Parameters:
    ///   - now: the clock, injected so tests control time.
    ///   - makeID: the order id generator, injected for the same reason.
    ///   - deliveryPolicy: the delivery planner's budgets and the app's bundle ID.
    public init(
        pool: PostgresPool, deliveryPolicy: DeliveryPolicy = DeliveryPolicy(bundleID: OrderStore.defaultBundleID),
        now: @escaping @Sendable () -> Date = Date.init, makeID: @escaping @Sendable () -> UUID = UUID.init
    ) {
        self.pool = pool
        self.deliveryPolicy = deliveryPolicy
        self.now = now
        self.makeID = makeID
    }

    // MARK: - Stores

    /// Creates or renames a store; `created` tells which.
    public func putStore(id: String, name: String, timezone: String) async throws(StoreError) -> (store: Store, created: Bool) {
        try await database {
            try await pool.withConnection { connection in
                let known = try await connection.query("SELECT 1 FROM pg_timezone_names WHERE name = \(timezone)")
                guard !known.isEmpty else { throw StoreError.invalidTimezone(timezone) }
                let rows = try await connection.query(
                    """
                    INSERT INTO stores (store_id, name, timezone) VALUES (\(id), \(name), \(timezone))
                    ON CONFLICT (store_id) DO UPDATE SET name = EXCLUDED.name, timezone = EXCLUDED.timezone, updated_at = now()
                    RETURNING store_id, name, timezone, created_at, updated_at, (xmax = 0) AS created
                    """)
                let row = rows[0]
                return (try Self.store(from: row), try row.decode("created", as: Bool.self))
            }
        }
    }

    public func store(id: String) async throws(StoreError) -> Store? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT store_id, name, timezone, created_at, updated_at FROM stores WHERE store_id = \(id)"
                ).first.map(Self.store(from:))
            }
        }
    }

    // MARK: - Commands

    /// Places an order (the `placed` event).
    public func place(
        _ placement: OrderPlacement, role: Role, request: IdempotentRequest, render: @escaping ResponseRenderer
    ) async throws(StoreError) -> CommandResponse {
        let at = now()
        let id = makeID()
        // Bad input is refused before any lock is taken or key claimed (and before the store lookup, so an
        // invalid store_id is a 422 naming the field, not a 404).
        do throws(OrderError) {
            try OrderValidation.validate(placement, now: at)
        } catch {
            throw .rejected(error)
        }
        return try await database {
            try await pool.withTransaction { connection in
                if let replay = try await Self.claim(request, store: placement.storeID, on: connection) { return replay }
                // The number, and the customer's tokens with their last day of decisions, in one round trip.
                let numbers = try await connection.query(
                    """
                    WITH s AS (
                        UPDATE stores SET next_order_number = next_order_number + 1 WHERE store_id = \(placement.storeID)
                        RETURNING store_id, next_order_number - 1 AS number, name, timezone
                    ), o AS (
                        SELECT s.store_id, NULL::uuid AS order_id, \(placement.customerRef)::text AS customer_ref FROM s
                    ), t AS (\(unescaped: DeliveryPlanning.targetsCTE))
                    SELECT s.number, s.name, s.timezone, \(DeliveryPlanning.selectColumns(since: at.addingTimeInterval(-DeliveryPlanning.historyWindow)))
                    FROM s
                    """)
                guard let storeRow = numbers.first else { throw StoreError.unknownStore(placement.storeID) }
                let number = try storeRow.decode("number", as: Int.self)
                let order: Order
                do throws(OrderError) {
                    order = try OrderStateMachine.place(placement, id: id, number: number, at: at)
                } catch {
                    throw StoreError.rejected(error)
                }
                let response = try render(order)
                let storeName: String = try storeRow.decode("name")
                let timezone: String = try storeRow.decode("timezone")
                let projection = try StoredProjection.json(order, storeName: storeName, timezone: timezone, now: at)
                let plan = try planDeliveries(
                    order: order, previous: nil, event: .placed, storeName: storeName, timezone: timezone, at: at, row: storeRow)
                try await connection.query(
                    """
                    WITH inserted AS (
                        INSERT INTO orders (store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items,
                                            state, version, eta, placed_at, updated_at, projection)
                        VALUES (\(order.storeID), \(order.id), \(order.number), \(order.posRef), \(order.customerRef),
                                \(order.displayName), \(order.locale), \(try PostgresJSON(encoding: order.items))::jsonb,
                                \(order.state.rawValue), \(order.version), \(order.eta), \(at), \(at), \(projection)::jsonb)
                        RETURNING store_id, order_id
                    ), event AS (
                        INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
                        SELECT store_id, order_id, 1, 'placed', \(try PostgresJSON(encoding: EventData.placed(placement)))::jsonb,
                               \(role.rawValue), \(request.key), \(at)
                        FROM inserted
                    ), answer AS (
                        \(Self.storeAnswer(response, request: request, store: order.storeID))
                    ), \(try DeliveryPlanning.writeCTEs(plan, order: order, event: .placed, at: at))
                    \(Self.notify(order))
                    """)
                return CommandResponse(status: response.status, body: response.body, replayed: false)
            }
        }
    }

    /// Applies an event to an existing order.
    public func apply(
        _ event: OrderEvent, to orderID: UUID, expectedVersion: Int?, role: Role, request: IdempotentRequest,
        render: @escaping ResponseRenderer
    ) async throws(StoreError) -> CommandResponse {
        let at = now()
        return try await database {
            try await pool.withTransaction { connection in
                // The order, locked, with its targets and their last day of decisions, in one round trip.
                let rows = try await connection.query(
                    """
                    WITH o AS (
                        SELECT \(unescaped: OrderRow.columns),
                               (SELECT name FROM stores s WHERE s.store_id = orders.store_id) AS store_name,
                               (SELECT timezone FROM stores s WHERE s.store_id = orders.store_id) AS store_timezone
                        FROM orders WHERE order_id = \(orderID) FOR UPDATE
                    ), t AS (\(unescaped: DeliveryPlanning.targetsCTE))
                    SELECT o.*, \(DeliveryPlanning.selectColumns(since: at.addingTimeInterval(-DeliveryPlanning.historyWindow)))
                    FROM o
                    """)
                guard let row = rows.first else { throw StoreError.unknownOrder }
                let current = try OrderRow.order(from: row)
                if let replay = try await Self.claim(request, store: current.storeID, on: connection) { return replay }
                let next: Order
                do throws(OrderError) {
                    next = try OrderStateMachine.apply(event, to: current, expectedVersion: expectedVersion, at: at)
                } catch {
                    throw StoreError.rejected(error)
                }
                let response = try render(next)
                let storeName: String = try row.decode("store_name")
                let timezone: String = try row.decode("store_timezone")
                let projection = try StoredProjection.json(next, storeName: storeName, timezone: timezone, now: at)
                let plan = try planDeliveries(
                    order: next, previous: current, event: event.type, storeName: storeName, timezone: timezone, at: at, row: row)
                try await connection.query(
                    """
                    WITH event AS (
                        INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
                        VALUES (\(next.storeID), \(next.id), \(next.version), \(event.type.rawValue),
                                \(try PostgresJSON(encoding: EventData.of(event)))::jsonb, \(role.rawValue), \(request.key), \(at))
                    ), updated AS (
                        UPDATE orders SET state = \(next.state.rawValue), version = \(next.version), eta = \(next.eta),
                               barista = \(next.barista), pickup_point = \(next.pickupPoint), delay_reason = \(next.delayReason),
                               cancel_reason = \(next.cancelReason), updated_at = \(at), projection = \(projection)::jsonb
                        WHERE store_id = \(next.storeID) AND order_id = \(next.id)
                    ), answer AS (
                        \(Self.storeAnswer(response, request: request, store: next.storeID))
                    ), \(try DeliveryPlanning.writeCTEs(plan, order: next, event: event.type, at: at))
                    \(Self.notify(next))
                    """)
                return CommandResponse(status: response.status, body: response.body, replayed: false)
            }
        }
    }

    // MARK: - Delivery planning

    private func planDeliveries(
        order: Order, previous: Order?, event: OrderEventType, storeName: String, timezone: String, at: Date, row: PostgresRow
    ) throws -> DeliveryPlan {
        let context = DeliveryContext(
            order: order, previous: previous, event: event, storeName: storeName,
            timeZone: TimeZone(identifier: timezone) ?? .gmt, now: at,
            targets: try DeliveryPlanning.targets(from: row), history: try DeliveryPlanning.history(from: row))
        return DeliveryPlanner.plan(context, policy: deliveryPolicy)
    }

    // MARK: - Idempotency

    /// Claims the key inside the transaction. Returns the stored answer when the same request was seen
    /// within the window; throws `idempotencyMismatch` when the key was used for another request. A
    /// concurrent request with the same key waits on the key's row until the first one commits.
    private static func claim(_ request: IdempotentRequest, store: String, on connection: PostgresConnection) async throws -> CommandResponse? {
        let claimed = try await connection.query(
            """
            INSERT INTO idempotency_keys (store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
            VALUES (\(store), \(request.scope), \(request.key), \(request.path), \(request.body), 0, '')
            ON CONFLICT (store_id, scope, idempotency_key) DO UPDATE
                SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
                    response_status = 0, response_body = '', created_at = now()
                WHERE idempotency_keys.created_at < now() - make_interval(secs => \(idempotencyWindow))
            RETURNING 1
            """)
        if !claimed.isEmpty { return nil }
        let rows = try await connection.query(
            """
            SELECT request_path = \(request.path) AND request_body = \(request.body) AS same,
                   response_status, response_body
            FROM idempotency_keys WHERE store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
            """)
        guard let row = rows.first, try row.decode("same", as: Bool.self) else { throw StoreError.idempotencyMismatch }
        return CommandResponse(status: try row.decode("response_status"), body: try row.decode("response_body"), replayed: true)
    }

    private static func storeAnswer(_ response: (status: Int, body: String), request: IdempotentRequest, store: String) -> PostgresQuery {
        """
        UPDATE idempotency_keys SET response_status = \(response.status), response_body = \(response.body)
        WHERE store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
        """
    }

    private static func notify(_ order: Order) -> PostgresQuery {
        let payload: JSONValue = [
            "store_id": .string(order.storeID), "order_id": .string(order.id.uuidString.lowercased()),
            "version": .number(Double(order.version)), "state": .string(order.state.rawValue),
        ]
        let text = (try? PostgresJSON(encoding: payload).text) ?? "{}"
        return "SELECT pg_notify(\(changeChannel), \(text))"
    }

    // MARK: - Helpers

    static func store(from row: PostgresRow) throws -> Store {
        Store(
            id: try row.decode("store_id"), name: try row.decode("name"), timezone: try row.decode("timezone"),
            createdAt: try row.decode("created_at"), updatedAt: try row.decode("updated_at"))
    }

    /// Runs database work, translating failures into `StoreError`.
    func database<T: Sendable>(_ body: () async throws -> sending T) async throws(StoreError) -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresError {
            throw .database(error)
        } catch {
            throw .database(PostgresError(.server, detail: "\(error)"))
        }
    }
}
