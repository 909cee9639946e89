public import CremaCore

/// `PUT` and `GET /v1/admin/tenants/{tenant}/limits` (docs/limits.md): the field names of docs/design.md §9.2, and
/// `share`, added since. In a `PUT`, an absent field follows the operator's default; a `GET` shows every limit in
/// force and which are the tenant's own.
public struct TenantLimitsDocument: Codable, Sendable, Hashable {
    public var tokensPerCustomer: Int?
    public var streamsPerKey: Int?
    public var webhooks: Int?
    public var eventsPerOrder: Int?
    /// `rate/burst` requests per second, or `"0"` for no rate limit.
    public var rate: String?
    /// The tenant's weight against the others when they compete for the database (`TenantLimits.share`), 1 to 100.
    public var share: Int?
    /// In answers only: the limits set for this tenant rather than taken from the operator's defaults.
    public var own: [String]?

    enum CodingKeys: String, CodingKey {
        case tokensPerCustomer = "tokens_per_customer", streamsPerKey = "streams_per_key", webhooks
        case eventsPerOrder = "events_per_order", rate, share, own
    }

    public init(
        tokensPerCustomer: Int? = nil, streamsPerKey: Int? = nil, webhooks: Int? = nil, eventsPerOrder: Int? = nil, rate: String? = nil,
        share: Int? = nil, own: [String]? = nil
    ) {
        self.tokensPerCustomer = tokensPerCustomer
        self.streamsPerKey = streamsPerKey
        self.webhooks = webhooks
        self.eventsPerOrder = eventsPerOrder
        self.rate = rate
        self.share = share
        self.own = own
    }

    /// The answer: every limit in force, and which of them the tenant set.
    public init(_ limits: TenantLimits, own overrides: TenantLimitOverrides?) {
        let overrides = overrides ?? TenantLimitOverrides()
        let set: [(CodingKeys, Bool)] = [
            (.tokensPerCustomer, overrides.tokensPerCustomer != nil), (.streamsPerKey, overrides.streamsPerKey != nil),
            (.webhooks, overrides.webhooks != nil), (.eventsPerOrder, overrides.eventsPerOrder != nil), (.rate, overrides.rate != nil),
            (.share, overrides.share != nil),
        ]
        self.init(
            tokensPerCustomer: limits.tokensPerCustomer, streamsPerKey: limits.streamsPerKey, webhooks: limits.webhooks,
            eventsPerOrder: limits.eventsPerOrder, rate: limits.rate.description, share: limits.share,
            own: set.filter(\.1).map(\.0.rawValue))
    }

    /// The request as the tenant's own values, or the API's refusal naming the first field out of range.
    public func overrides() throws(APIError) -> TenantLimitOverrides {
        var rateSetting: RateSetting?
        if let rate {
            guard let parsed = RateSetting(parsing: rate) else {
                throw .invalidField(field: "rate", reason: "must be \"rate/burst\" requests per second (e.g. \"200/400\"), or \"0\" for none")
            }
            rateSetting = parsed
        }
        let overrides = TenantLimitOverrides(
            tokensPerCustomer: tokensPerCustomer, streamsPerKey: streamsPerKey, webhooks: webhooks, eventsPerOrder: eventsPerOrder,
            rate: rateSetting, share: share)
        if let (name, _) = overrides.invalidCount, let range = TenantLimits.countRange[name] {
            throw .invalidField(field: name.rawValue, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        if let share, !TenantLimits.shareRange.contains(share) {
            let range = TenantLimits.shareRange
            throw .invalidField(field: CodingKeys.share.rawValue, reason: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return overrides
    }
}
