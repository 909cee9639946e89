/// What one tenant's callers may hold and send (docs/limits.md): defaults a real chain never meets and a flood always
/// does, set by the operator for every tenant and by an administrator for one.
public struct TenantLimits: Sendable, Hashable {
    /// Device tokens one customer may hold, per kind (alert, widget, push-to-start).
    public var tokensPerCustomer: Int
    /// Dashboard streams one API key may hold open at once, in one process.
    public var streamsPerKey: Int
    /// Webhook endpoints one tenant may register.
    public var webhooks: Int
    /// Events one order may hold, its `placed` event included.
    public var eventsPerOrder: Int
    /// Requests per second per API key and per customer.
    public var rate: RateSetting
    /// The tenant's weight when tenants compete for what is scarce (the database connections of order commands): while
    /// another waits, a tenant holds at most `pool × share / (the shares of the tenants holding or waiting)`. Not a
    /// limit anyone is refused by, and no variable: every tenant's is 1 (an equal split) unless an administrator set it.
    public var share: Int

    /// The product's defaults (docs/design.md §9.2).
    public static let defaults = TenantLimits(
        tokensPerCustomer: 20, streamsPerKey: 64, webhooks: 20, eventsPerOrder: 64,
        rate: .limited(RequestRate(perSecond: 200, burst: 400)!))

    /// The accepted range of each count limit: at least one of each (an order needs its `placed` and its end), at most
    /// what one statement of the store can still carry in one round trip.
    public static let countRange: [LimitName: ClosedRange<Int>] = [
        .tokensPerCustomer: 1...1_000, .streamsPerKey: 1...4_096, .webhooks: 1...1_000, .eventsPerOrder: 2...10_000,
    ]

    /// The accepted shares: a tenant may weigh up to a hundred times another.
    public static let shareRange = 1...100

    public init(tokensPerCustomer: Int, streamsPerKey: Int, webhooks: Int, eventsPerOrder: Int, rate: RateSetting, share: Int = 1) {
        self.tokensPerCustomer = tokensPerCustomer
        self.streamsPerKey = streamsPerKey
        self.webhooks = webhooks
        self.eventsPerOrder = eventsPerOrder
        self.rate = rate
        self.share = share
    }

    /// The count limit named `name` (nil for `rate`, which is not a count).
    public func count(_ name: LimitName) -> Int? {
        switch name {
        case .tokensPerCustomer: tokensPerCustomer
        case .streamsPerKey: streamsPerKey
        case .webhooks: webhooks
        case .eventsPerOrder: eventsPerOrder
        case .rate: nil
        }
    }

    /// Whether an order holding `events` events may take one more of `type`. The last place is kept for an end
    /// (picked up, canceled, expired), so a flood of `delayed` can never leave an order that cannot be closed.
    public func admits(_ type: OrderEventType, toOrderHolding events: Int) -> Bool {
        let ending = type == .pickedUp || type == .canceled || type == .expired
        return events + (ending ? 1 : 2) <= eventsPerOrder
    }

    /// These limits with a tenant's own values where it has them.
    public func overridden(by tenant: TenantLimitOverrides) -> TenantLimits {
        TenantLimits(
            tokensPerCustomer: tenant.tokensPerCustomer ?? tokensPerCustomer, streamsPerKey: tenant.streamsPerKey ?? streamsPerKey,
            webhooks: tenant.webhooks ?? webhooks, eventsPerOrder: tenant.eventsPerOrder ?? eventsPerOrder, rate: tenant.rate ?? rate,
            share: tenant.share ?? share)
    }
}

/// A tenant's own limits, as an administrator set them; nil fields follow the operator's defaults.
public struct TenantLimitOverrides: Sendable, Hashable {
    public var tokensPerCustomer: Int?
    public var streamsPerKey: Int?
    public var webhooks: Int?
    public var eventsPerOrder: Int?
    public var rate: RateSetting?
    public var share: Int?

    public init(
        tokensPerCustomer: Int? = nil, streamsPerKey: Int? = nil, webhooks: Int? = nil, eventsPerOrder: Int? = nil, rate: RateSetting? = nil,
        share: Int? = nil
    ) {
        self.tokensPerCustomer = tokensPerCustomer
        self.streamsPerKey = streamsPerKey
        self.webhooks = webhooks
        self.eventsPerOrder = eventsPerOrder
        self.rate = rate
        self.share = share
    }

    /// The first count outside its range, or nil when every value set is acceptable.
    public var invalidCount: (name: LimitName, value: Int)? {
        let values: [(LimitName, Int?)] = [
            (.tokensPerCustomer, tokensPerCustomer), (.streamsPerKey, streamsPerKey), (.webhooks, webhooks), (.eventsPerOrder, eventsPerOrder),
        ]
        for (name, value) in values {
            if let value, let range = TenantLimits.countRange[name], !range.contains(value) { return (name, value) }
        }
        return nil
    }
}
