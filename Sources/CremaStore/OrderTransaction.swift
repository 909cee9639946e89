public import CremaCore
import CremaPostgres
public import Foundation

/// The statements of one order command, all on one transaction and two round trips: `BEGIN`, claim the
/// Idempotency-Key and read and lock what the core decides on (the order, and the store's row for its next stream
/// position); then write the event, the order, its projection, the stored answer and the planned deliveries in one
/// statement, and `COMMIT`. Deciding is the caller's
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

    /// What placing an order reads: the store's next number and stream position, and the planning inputs.
    public struct Placement: Sendable {
        public var number: Int
        public var inputs: PlanningInputs
        /// The position on the store's stream the event takes (migration 023): the store's row stays locked until the
        /// command ends, so no other event of the store takes a position meanwhile.
        public var streamPosition: Int64
        /// The tenant's live webhook endpoints that want an event an order command writes in this store: the write
        /// queues their deliveries, and stores no webhook event (no statement for one) when there is none.
        public var webhookEndpoints: [WantingEndpoint]
    }

    /// What applying an event reads, with the order row locked until commit.
    public struct LockedOrder: Sendable {
        public var order: Order
        public var inputs: PlanningInputs
        /// The tenant's own `events_per_order` limit, read with the order; nil: the operator's default applies.
        public var eventsPerOrder: Int?
        /// The position on the store's stream the event takes, as `Placement.streamPosition`.
        public var streamPosition: Int64
        /// As `Placement.webhookEndpoints`.
        public var webhookEndpoints: [WantingEndpoint]
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
            OrderStatements.Claim(scope: scope, request: request, source: .store(store), now: now).query,
            OrderStatements.PlacementRead(scope: scope, store: store, customerRef: customerRef, defaultBundleID: defaultBundleID, now: now).query,
        ])
        if answers[0].isEmpty { return .replay(try await storedAnswer(request, store: store)) }
        guard let row = answers[1].first else { return .opened(nil) }
        return .opened(
            Placement(
                number: try row.decode("number"), inputs: try Self.inputs(from: row, name: "name", timezone: "timezone"),
                streamPosition: try row.decode("stream_position"), webhookEndpoints: try WebhookOutbox.endpoints(from: row)))
    }

    /// Locks the order and claims the key in its store, reading the order with its store, targets and their decisions
    /// since `now` minus the planning history window, in one round trip with the transaction's `BEGIN`. A replay rolls
    /// back and answers what was stored.
    public func openOrder(id: UUID, _ request: IdempotentRequest, now: Date) async throws -> Opening<LockedOrder> {
        let answers = try await connection.pipeline([
            OrderStatements.OrderRead(scope: scope, id: id, defaultBundleID: defaultBundleID, now: now).query,
            OrderStatements.Claim(scope: scope, request: request, source: .order(id), now: now).query,
        ])
        guard let row = answers[0].first else { return .opened(nil) }
        let order = try OrderRow.order(from: row)
        if answers[1].isEmpty { return .replay(try await storedAnswer(request, store: order.storeID)) }
        return .opened(
            LockedOrder(
                order: order, inputs: try Self.inputs(from: row, name: "store_name", timezone: "store_timezone"),
                eventsPerOrder: try row.decode("events_per_order"), streamPosition: try row.decode("stream_position"),
                webhookEndpoints: try WebhookOutbox.endpoints(from: row)))
    }

    /// The answer stored with a key seen before, read as the transaction rolls back (nothing of it was meant to
    /// stay); throws `idempotencyMismatch` when the key was used for another request.
    private func storedAnswer(_ request: IdempotentRequest, store: String) async throws -> CommandResponse {
        let answers = try await connection.pipeline([
            OrderStatements.StoredAnswer(scope: scope, request: request, store: store).query,
            PostgresStatement.rollback.query,
        ])
        guard let row = answers[0].first, try row.decode("same", as: Bool.self) else { throw StoreError.idempotencyMismatch }
        return CommandResponse(status: try row.decode("response_status"), body: try row.decode("response_body"), replayed: true)
    }

    /// Writes a new order with its `placed` event (at the stream position `opened` took), projection (the plan's), stored
    /// answer and planned deliveries in one statement, with the webhook events `hooks` for the endpoints `opened` found
    /// wanting them, and commits, in one round trip.
    public func insertPlaced(
        _ order: Order, placement: OrderPlacement, role: Role, request: IdempotentRequest, opened: Placement,
        answer: CommandResponse, plan: DeliveryPlan, hooks: [WebhookDraft], at: Date
    ) async throws {
        let effects = OrderStatements.Effects(
            tenant: scope.tenant, request: request, answer: answer, plan: plan, targets: opened.inputs.targets,
            hooks: WebhookOutbox.OrderFanOut(hooks, endpoints: opened.webhookEndpoints), event: .placed, at: at)
        let statement = OrderStatements.Placed(
            order: order, items: try PostgresJSON(encoding: order.items), data: try EventData.stored(EventData.placed(placement)),
            projection: try StoredProjection.json(plan.projection), role: role, streamPosition: opened.streamPosition, effects: effects)
        try await writeAndCommit(statement.query, order: order, effects: effects)
        changed.insert(tenant: scope.tenant, store: order.storeID)
    }

    /// Appends `event` (which moved the order to `next`) at the stream position `opened` took and updates the order, its
    /// projection (the plan's), the stored answer, planned deliveries and webhook events in one statement, and commits, in
    /// one round trip.
    public func appendEvent(
        _ event: OrderEvent, next: Order, role: Role, request: IdempotentRequest, opened: LockedOrder,
        answer: CommandResponse, plan: DeliveryPlan, hooks: [WebhookDraft], at: Date
    ) async throws {
        let effects = OrderStatements.Effects(
            tenant: scope.tenant, request: request, answer: answer, plan: plan, targets: opened.inputs.targets,
            hooks: WebhookOutbox.OrderFanOut(hooks, endpoints: opened.webhookEndpoints), event: event.type, at: at)
        let statement = OrderStatements.Appended(
            next: next, data: try EventData.stored(EventData.of(event)), projection: try StoredProjection.json(plan.projection),
            role: role, streamPosition: opened.streamPosition, effects: effects)
        try await writeAndCommit(statement.query, order: next, effects: effects)
        changed.insert(tenant: scope.tenant, store: next.storeID)
    }

    /// The command's last round trip: its one write statement (and, for a plan past one statement's parameters, the
    /// outbox rows that did not fit) and `COMMIT` together. Notes the work it queued, so that after the commit only the
    /// dispatchers with something to send are woken.
    private func writeAndCommit(_ statement: PostgresQuery, order: Order, effects: OrderStatements.Effects) async throws {
        let more = DeliveryPlanning.more(
            effects.plan, order: order, tenant: effects.tenant, targets: effects.targets, event: effects.event, at: effects.at)
        try await connection.pipeline([statement] + more + [PostgresStatement.commit.query])
        if !effects.plan.deliveries.isEmpty { changed.queued(.pushes) }
        if !effects.hooks.deliveries.isEmpty { changed.queued(.webhooks) }
    }

    private static func inputs(from row: PostgresRow, name: String, timezone: String) throws -> PlanningInputs {
        PlanningInputs(
            storeName: try row.decode(name), timezone: try row.decode(timezone), targets: try DeliveryPlanning.targets(from: row),
            history: try DeliveryPlanning.history(from: row))
    }
}
