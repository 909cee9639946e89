public import CremaCore
import CremaPostgres
public import Foundation

/// The statements of one order command, all on one transaction and two round trips: `BEGIN`, claim the
/// Idempotency-Key and read and lock what the core decides on; then write the event, the order, its projection,
/// the stored answer and the planned deliveries in one statement, and `COMMIT`. Deciding is the caller's
/// (`OrderService`) between the two; this type only reads and writes. Which stores it changed is told to the
/// `ChangeFeed` after the commit, never from inside the transaction.
public struct OrderTransaction: Sendable {
    let connection: PostgresConnection
    /// Whose order this is: every statement is filtered by it, so another tenant's (or store's) order is not found.
    let scope: TenantScope
    /// The app of a token registered without one, in the default tenant only (`CREMA_APNS_TOPIC`).
    let defaultBundleID: String?
    /// The stores written to and the work queued, published by `CremaDatabase.command` once the transaction committed.
    let changed: PendingChanges

    /// What the core plans a change with, read with the order: the store's name and time zone, and the
    /// customer's tokens with their decisions of the last `DeliveryPlanning.historyWindow`.
    public struct PlanningInputs: Sendable {
        public var storeName: String
        public var timezone: String
        public var targets: [PushTarget]
        public var history: [DeliveryRecord]
    }

    /// What placing an order reads: the store's next number, and the planning inputs.
    public struct Placement: Sendable {
        public var number: Int
        public var inputs: PlanningInputs
    }

    /// What applying an event reads, with the order row locked until commit.
    public struct LockedOrder: Sendable {
        public var order: Order
        public var inputs: PlanningInputs
        /// The tenant's own `events_per_order` limit, read with the order; nil: the operator's default applies.
        public var eventsPerOrder: Int?
    }

    /// What opening a command found: the stored answer of a replayed request, or what the command decides on
    /// (nil when its store or order is not within the scope).
    public enum Opening<Value: Sendable>: Sendable {
        case replay(CommandResponse)
        case opened(Value?)
    }

    /// Claims the key and takes the store's next order number with the planning inputs, in one round trip with the
    /// transaction's `BEGIN`. A replay rolls back (the number is not spent) and answers what was stored.
    public func openPlacement(_ request: IdempotentRequest, store: String, customerRef: String?, now: Date) async throws -> Opening<Placement> {
        let answers = try await connection.pipeline([
            claim(request, storeFrom: "(SELECT \(store)::text AS store_id)"),
            """
            WITH s AS (
                UPDATE stores SET next_order_number = next_order_number + 1 WHERE \(scope.sql) AND store_id = \(store)
                RETURNING tenant_id, store_id, next_order_number - 1 AS number, name, timezone
            ), o AS (
                SELECT s.tenant_id, s.store_id, NULL::uuid AS order_id, \(customerRef)::text AS customer_ref FROM s
            ), t AS (\(DeliveryPlanning.targets(defaultBundleID: defaultBundleID)))
            SELECT s.number, s.name, s.timezone, \(DeliveryPlanning.selectColumns(now: now))
            FROM s
            """,
        ])
        if answers[0].isEmpty { return .replay(try await storedAnswer(request, store: store)) }
        guard let row = answers[1].first else { return .opened(nil) }
        return .opened(Placement(number: try row.decode("number"), inputs: try Self.inputs(from: row, name: "name", timezone: "timezone")))
    }

    /// Locks the order and claims the key in its store, reading the order with its store, targets and their decisions
    /// since `now` minus the planning history window, in one round trip with the transaction's `BEGIN`. A replay rolls
    /// back and answers what was stored.
    public func openOrder(id: UUID, _ request: IdempotentRequest, now: Date) async throws -> Opening<LockedOrder> {
        let answers = try await connection.pipeline([
            """
            WITH o AS (
                SELECT tenant_id, \(unescaped: OrderRow.columns),
                       (SELECT name FROM stores s WHERE s.tenant_id = orders.tenant_id AND s.store_id = orders.store_id) AS store_name,
                       (SELECT timezone FROM stores s WHERE s.tenant_id = orders.tenant_id AND s.store_id = orders.store_id) AS store_timezone,
                       (SELECT events_per_order FROM tenant_limits l WHERE l.tenant_id = orders.tenant_id) AS events_per_order
                FROM orders WHERE \(scope.sql) AND order_id = \(id) FOR UPDATE
            ), t AS (\(DeliveryPlanning.targets(defaultBundleID: defaultBundleID)))
            SELECT o.*, \(DeliveryPlanning.selectColumns(now: now))
            FROM o
            """,
            claim(request, storeFrom: "(SELECT store_id FROM orders WHERE \(scope.sql) AND order_id = \(id))"),
        ])
        guard let row = answers[0].first else { return .opened(nil) }
        let order = try OrderRow.order(from: row)
        if answers[1].isEmpty { return .replay(try await storedAnswer(request, store: order.storeID)) }
        return .opened(
            LockedOrder(
                order: order, inputs: try Self.inputs(from: row, name: "store_name", timezone: "store_timezone"),
                eventsPerOrder: try row.decode("events_per_order")))
    }

    /// Claims the key in the store `source` names (a one-row subquery with a `store_id` column); no row comes back
    /// when the key was seen within the window. A concurrent request with the same key waits on the key's row
    /// until the first one commits.
    private func claim(_ request: IdempotentRequest, storeFrom source: PostgresQuery) -> PostgresQuery {
        """
        INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
        SELECT \(scope.tenant), k.store_id, \(request.scope), \(request.key), \(request.path), \(request.body), 0, ''
        FROM \(source) k
        ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
            SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
                response_status = 0, response_body = '', created_at = now()
            WHERE idempotency_keys.created_at < now() - make_interval(secs => \(IdempotencyRepository.window))
        RETURNING 1
        """
    }

    /// The answer stored with a key seen before, read as the transaction rolls back (nothing of it was meant to
    /// stay); throws `idempotencyMismatch` when the key was used for another request.
    private func storedAnswer(_ request: IdempotentRequest, store: String) async throws -> CommandResponse {
        let answers = try await connection.pipeline([
            """
            SELECT request_path = \(request.path) AND request_body = \(request.body) AS same,
                   response_status, response_body
            FROM idempotency_keys WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
            """,
            "ROLLBACK",
        ])
        guard let row = answers[0].first, try row.decode("same", as: Bool.self) else { throw StoreError.idempotencyMismatch }
        return CommandResponse(status: try row.decode("response_status"), body: try row.decode("response_body"), replayed: true)
    }

    /// Writes a new order with its `placed` event, projection (the plan's), stored answer and planned deliveries in one
    /// statement, with the webhook events `hooks` for the tenant's endpoints that want them, and commits, in one round trip.
    public func insertPlaced(
        _ order: Order, placement: OrderPlacement, role: Role, request: IdempotentRequest, inputs: PlanningInputs,
        answer: CommandResponse, plan: DeliveryPlan, hooks: [WebhookDraft], at: Date
    ) async throws {
        let projection = try StoredProjection.json(plan.projection)
        let deliveries = DeliveryPlanning.write(plan, order: order, tenant: scope.tenant, targets: inputs.targets, event: .placed, at: at)
        try await writeAndCommit(
            """
            WITH inserted AS (
                INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items,
                                    state, version, eta, placed_at, updated_at, projection)
                VALUES (\(scope.tenant), \(order.storeID), \(order.id), \(order.number), \(order.posRef), \(order.customerRef),
                        \(order.displayName), \(order.locale), \(try PostgresJSON(encoding: order.items))::jsonb,
                        \(order.state.rawValue), \(order.version), \(order.eta), \(at), \(at), \(projection)::jsonb)
                RETURNING tenant_id, store_id, order_id
            ), event AS (
                INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
                SELECT tenant_id, store_id, order_id, 1, 'placed', \(try PostgresJSON(encoding: EventData.placed(placement)))::jsonb,
                       \(role.rawValue), \(request.key), \(at)
                FROM inserted
            ), answer AS (
                \(storeAnswer(answer, request: request, store: order.storeID))
            ), board AS (
                \(BroadcastRepository.queueBoard(tenant: scope.tenant, store: order.storeID, change: BoardChange(event: .placed), at: at))
            ), \(deliveries.ctes),
            \(WebhookOutbox.orderCTEs(hooks, tenant: scope.tenant, store: order.storeID, orderID: order.id, customerRef: order.customerRef, at: at))
            SELECT \(WebhookOutbox.queuedDeliveries)
            """, more: deliveries.more, plan: plan)
        changed.insert(tenant: scope.tenant, store: order.storeID)
    }

    /// Appends `event` (which moved the order to `next`) and updates the order, its projection (the plan's), the stored
    /// answer, planned deliveries and webhook events in one statement, and commits, in one round trip.
    public func appendEvent(
        _ event: OrderEvent, next: Order, role: Role, request: IdempotentRequest, inputs: PlanningInputs,
        answer: CommandResponse, plan: DeliveryPlan, hooks: [WebhookDraft], at: Date
    ) async throws {
        let projection = try StoredProjection.json(plan.projection)
        let deliveries = DeliveryPlanning.write(plan, order: next, tenant: scope.tenant, targets: inputs.targets, event: event.type, at: at)
        try await writeAndCommit(
            """
            WITH event AS (
                INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
                VALUES (\(scope.tenant), \(next.storeID), \(next.id), \(next.version), \(event.type.rawValue),
                        \(try PostgresJSON(encoding: EventData.of(event)))::jsonb, \(role.rawValue), \(request.key), \(at))
            ), updated AS (
                UPDATE orders SET state = \(next.state.rawValue), version = \(next.version), eta = \(next.eta),
                       barista = \(next.barista), pickup_point = \(next.pickupPoint), delay_reason = \(next.delayReason),
                       cancel_reason = \(next.cancelReason), updated_at = \(at), projection = \(projection)::jsonb,
                       -- An event after an erasure may bring new text (a cancel reason): retention looks at the order again.
                       personal_data_removed_at = NULL
                WHERE tenant_id = \(scope.tenant) AND store_id = \(next.storeID) AND order_id = \(next.id)
            ), answer AS (
                \(storeAnswer(answer, request: request, store: next.storeID))
            ), board AS (
                \(BroadcastRepository.queueBoard(tenant: scope.tenant, store: next.storeID, change: BoardChange(event: event.type), at: at))
            ), \(deliveries.ctes),
            \(WebhookOutbox.orderCTEs(hooks, tenant: scope.tenant, store: next.storeID, orderID: next.id, customerRef: next.customerRef, at: at))
            SELECT \(WebhookOutbox.queuedDeliveries)
            """, more: deliveries.more, plan: plan)
        changed.insert(tenant: scope.tenant, store: next.storeID)
    }

    /// The command's last round trip: its one write statement (and, for a plan past one statement's parameters, the
    /// outbox rows that did not fit, `more`) and `COMMIT` together. Notes the work it queued, so
    /// that after the commit only the dispatchers with something to send are woken.
    private func writeAndCommit(_ statement: PostgresQuery, more: [PostgresQuery], plan: DeliveryPlan) async throws {
        let answers = try await connection.pipeline([statement] + more + ["COMMIT"])
        if !plan.deliveries.isEmpty { changed.queued(.pushes) }
        // After COMMIT nothing may fail the command: a row that cannot be read wakes the webhook dispatcher anyway.
        if (try? answers[0].first?.decode(WebhookOutbox.queuedColumn, as: Bool.self)) ?? true { changed.queued(.webhooks) }
    }

    private static func inputs(from row: PostgresRow, name: String, timezone: String) throws -> PlanningInputs {
        PlanningInputs(
            storeName: try row.decode(name), timezone: try row.decode(timezone), targets: try DeliveryPlanning.targets(from: row),
            history: try DeliveryPlanning.history(from: row))
    }

    private func storeAnswer(_ answer: CommandResponse, request: IdempotentRequest, store: String) -> PostgresQuery {
        """
        UPDATE idempotency_keys SET response_status = \(answer.status), response_body = \(answer.body)
        WHERE tenant_id = \(scope.tenant) AND store_id = \(store) AND scope = \(request.scope) AND idempotency_key = \(request.key)
        """
    }
}
