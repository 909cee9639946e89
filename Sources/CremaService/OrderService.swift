public import CremaAPNsProtocol
public import CremaClock
public import CremaCore
public import CremaStore
public import Foundation

/// The application layer: runs each order command as load, decide with the pure core, plan deliveries,
/// persist, in one transaction, and answers with the API's representation (stored with the Idempotency-Key
/// so a replay answers byte for byte). Routes and tools call this; only `CremaStore` speaks SQL.
public struct OrderService: Sendable {
    public let database: CremaDatabase
    /// The numbers the delivery planner uses for every change.
    public let deliveryPolicy: DeliveryPolicy
    /// The default tenant's app (`CREMA_APNS_TOPIC`): where its tokens registered without an app belong.
    public let defaultBundleID: String
    /// The load limits in force for each tenant (docs/limits.md).
    public let limits: TenantLimitsDirectory
    /// The service's clock, also for the work that runs beside commands (the expiry sweep, retention, erasure).
    public let clock: CremaClock
    private let makeID: @Sendable () -> UUID
    /// Opens the receipts customers post (`POST /v1/me/receipts`); nil without `CREMA_MASTER_KEY`.
    public let receiptKey: DeliveryReceiptKey?
    /// Told of every receipt written for the first time (the process counts them: `crema_push_receipts_total`).
    let onReceipts: @Sendable ([RecordedReceipt]) -> Void

    /// - Parameters:
    ///   - clock: the root's clock, injected so tests control time.
    ///   - makeID: the order id generator, injected for the same reason.
    ///   - limits: the operator's default load limits (each tenant's own are read from the database).
    public init(
        database: CremaDatabase, deliveryPolicy: DeliveryPolicy = DeliveryPolicy(),
        defaultBundleID: String = DeliveryPolicy.exampleBundleID, limits: TenantLimits = .defaults,
        clock: CremaClock, makeID: @escaping @Sendable () -> UUID = UUID.init, receiptKey: DeliveryReceiptKey? = nil,
        onReceipts: @escaping @Sendable ([RecordedReceipt]) -> Void = { _ in }
    ) {
        self.receiptKey = receiptKey
        self.onReceipts = onReceipts
        self.database = database
        self.limits = TenantLimitsDirectory(defaults: limits, repository: database.limits, clock: clock)
        self.deliveryPolicy = deliveryPolicy
        self.defaultBundleID = defaultBundleID
        self.clock = clock
        self.makeID = makeID
    }

    /// Places an order (the `placed` event) in a store `scope` reaches; answers 201 with the order.
    public func place(
        _ placement: OrderPlacement, in scope: TenantScope, role: Role, request: IdempotentRequest
    ) async throws(StoreError) -> CommandResponse {
        let at = clock.now
        let id = makeID()
        // Bad input is refused before any lock is taken or key claimed (and before the store lookup, so an
        // invalid store_id is a 422 naming the field, not a 404).
        do throws(OrderError) {
            try OrderValidation.validate(placement, now: at)
        } catch {
            throw .rejected(error)
        }
        // A store outside the scope is unknown before any key is claimed, as it is to every read.
        guard scope.includes(store: placement.storeID) else { throw .unknownStore(placement.storeID) }
        let weight = share(of: scope.tenant)
        return try await database.command(in: scope, share: weight, defaultBundleID: defaultApp(scope)) { transaction in
            let store: OrderTransaction.Placement
            switch try await transaction.openPlacement(request, store: placement.storeID, customerRef: placement.customerRef, now: at) {
            case .replay(let stored): return stored
            case .opened(nil): throw StoreError.unknownStore(placement.storeID)
            case .opened(let reserved?): store = reserved
            }
            let order = try Self.decide { () throws(OrderError) in try OrderStateMachine.place(placement, id: id, number: store.number, at: at) }
            let plan = plan(order: order, previous: nil, event: .placed, inputs: store.inputs, at: at)
            let answer = Self.answer(order, status: 201)
            try await transaction.insertPlaced(
                order, placement: placement, role: role, request: request, opened: store, answer: answer, plan: plan,
                hooks: webhooks(order, answer: answer, event: .placed, at: at), at: at)
            return answer
        }
    }

    /// The roles that send events to orders: the store's POS and its baristas. Which events each may send is the core's
    /// rule (`OrderEventType.permittedRoles`), checked once the event is read.
    public static let eventSenders: Set<Role> = [.pos, .barista]

    /// The data `principal` sends events in; `forbidden` unless its role is one of `eventSenders`.
    public static func eventSenderScope(of principal: APIPrincipal) throws(ServiceError) -> TenantScope {
        try principal.scope(among: eventSenders)
    }

    /// Applies an event to an existing order; answers 200 with the order as it is after the event.
    public func apply(
        _ event: OrderEvent, to orderID: UUID, in scope: TenantScope, expectedVersion: Int?, role: Role, request: IdempotentRequest
    ) async throws(StoreError) -> CommandResponse {
        let at = clock.now
        let weight = share(of: scope.tenant)
        return try await database.command(in: scope, share: weight, defaultBundleID: defaultApp(scope)) { transaction in
            let locked: OrderTransaction.LockedOrder
            switch try await transaction.openOrder(id: orderID, request, now: at) {
            case .replay(let stored): return stored
            case .opened(nil): throw StoreError.unknownOrder
            case .opened(let found?): locked = found
            }
            // Each event is a row kept for the order's life and returned by every read of it; the version counts them.
            // The tenant's limit is read with the order (no round trip of its own). Crema's own close (`system`) is never
            // refused: it is what ends an order nobody else will.
            var eventLimit = limits.defaults
            eventLimit.eventsPerOrder = locked.eventsPerOrder ?? eventLimit.eventsPerOrder
            guard role == .system || eventLimit.admits(event.type, toOrderHolding: locked.order.version) else {
                throw StoreError.limitReached(.eventsPerOrder, limit: eventLimit.eventsPerOrder)
            }
            let next = try Self.decide { () throws(OrderError) in
                try OrderStateMachine.apply(event, to: locked.order, expectedVersion: expectedVersion, at: at)
            }
            let plan = plan(order: next, previous: locked.order, event: event.type, inputs: locked.inputs, at: at)
            let answer = Self.answer(next, status: 200)
            try await transaction.appendEvent(
                event, next: next, role: role, request: request, opened: locked, answer: answer, plan: plan,
                hooks: webhooks(next, answer: answer, event: event.type, at: at), at: at)
            return answer
        }
    }

    /// Closes an order the expiry sweep found overdue: the `expired` event by `system`, through `apply` like every
    /// other event. Its version must still be the one the sweep saw (else `version_conflict`: the order moved on), and
    /// its Idempotency-Key is derived from that version, so a second process closing the same order replays the first
    /// close instead of closing twice.
    public func expire(_ overdue: LifecycleRepository.OverdueOrder) async throws(StoreError) -> CommandResponse {
        let order = overdue.order
        let id = order.id.uuidString.lowercased()
        let request = IdempotentRequest(
            scope: Role.system.rawValue, key: "expire-\(id)-v\(order.version)", path: "POST /v1/orders/\(id)/events",
            body: #"{"expected_version":\#(order.version),"reason":"\#(overdue.reason.rawValue)","type":"expired"}"#)
        return try await apply(
            .expired(reason: overdue.reason), to: order.id, in: TenantScope(tenant: overdue.tenant), expectedVersion: order.version,
            role: .system, request: request)
    }

    /// Registers a customer's alert, widget or push-to-start token within the tenant's `tokens_per_customer` limit
    /// (docs/limits.md); `replaces` retires the token it rotates from first, so a rotation never needs a spare place.
    public func putCustomerToken(
        customerRef: String, tenant: String, kind: PushTargetKind, token: String, environment: APNsEnvironment, bundleID: String?,
        replaces: String?
    ) async throws(StoreError) -> RegisteredToken {
        let limit = try await limits.limits(for: tenant).tokensPerCustomer
        return try await database.tokens.putCustomerToken(
            customerRef: customerRef, tenant: tenant, kind: kind, token: token, environment: environment,
            bundleID: tokenApp(bundleID, tenant: tenant), replaces: replaces, limit: limit)
    }

    /// The app a token registration names, as the token repository reads it: the default tenant's configured app
    /// (`CREMA_APNS_TOPIC`, not a row in `apps`) is its default, so naming it is the same as naming none.
    public func tokenApp(_ requested: String?, tenant: String) -> String? {
        tenant == TenantScope.defaultTenantName && requested == defaultBundleID ? nil : requested
    }

    /// The tenant's weight for the connection its command leases (docs/limits.md): from the limits its request's rate
    /// check read, so that a command stays two round trips; the default (1) while none were read in this process.
    private func share(of tenant: String) -> Int {
        (limits.lastRead(for: tenant) ?? limits.defaults).share
    }

    /// Only the default tenant falls back to the configured app; another tenant's tokens always name theirs.
    func defaultApp(_ scope: TenantScope) -> String? {
        scope.tenant == TenantScope.defaultTenantName ? defaultBundleID : nil
    }

    private func plan(
        order: Order, previous: Order?, event: OrderEventType, inputs: OrderTransaction.PlanningInputs, at: Date
    ) -> DeliveryPlan {
        DeliveryPlanner.plan(Self.context(order: order, previous: previous, event: event, inputs: inputs, at: at), policy: deliveryPolicy)
    }

    /// What the planner is asked about a change, from what the store read for it: by the command that makes the change,
    /// and by the preview that makes it again (`preview(orderID:in:)`).
    static func context(
        order: Order, previous: Order?, event: OrderEventType, inputs: OrderTransaction.PlanningInputs, at: Date
    ) -> DeliveryContext {
        DeliveryContext(
            order: order, previous: previous, event: event, storeName: inputs.storeName,
            timeZone: TimeZone(identifier: inputs.timezone) ?? .gmt, now: at, targets: inputs.targets, history: inputs.history)
    }

    /// What the tenant's webhook endpoints may hear of this change (docs/webhooks.md): always `order.changed`, and
    /// `activity.ended` when the event ended the order. Written only if some endpoint wants them. `order.changed`
    /// carries the command's `answer` as it was encoded for the client, not a second encoding of the order.
    private func webhooks(_ order: Order, answer: CommandResponse, event: OrderEventType, at: Date) -> [WebhookDraft] {
        let changed = makeID()
        let body = OrderWebhookBody.orderChanged(id: changed, createdAt: at, answer: answer.body)
        var drafts = [WebhookDraft(id: changed, type: .orderChanged, body: body)]
        if order.state.isTerminal {
            let id = makeID()
            let ended = OrderWebhookBody.activityEnded(
                id: id, createdAt: at, orderID: order.id, storeID: order.storeID, state: order.state.rawValue, endedBy: event.rawValue, endedAt: at)
            drafts.append(WebhookDraft(id: id, type: .activityEnded, body: ended))
        }
        return drafts
    }

    /// The core's refusal as the command's failure.
    private static func decide(_ body: () throws(OrderError) -> Order) throws(StoreError) -> Order {
        do throws(OrderError) {
            return try body()
        } catch {
            throw .rejected(error)
        }
    }

    /// The answer stored with the key: the order as `GET /v1/orders/{id}` shows it, without history (`OrderAnswer`),
    /// written once per command.
    private static func answer(_ order: Order, status: Int) -> CommandResponse {
        CommandResponse(status: status, body: OrderAnswer.json(order), replayed: false)
    }
}
