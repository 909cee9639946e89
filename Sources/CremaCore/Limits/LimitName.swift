/// The limits one caller's load is held to (docs/limits.md); raw values are the `details.limit` of a refusal and the
/// fields of `PUT /v1/admin/tenants/{tenant}/limits`, fixed by docs/design.md §9.2.
public enum LimitName: String, Sendable, Hashable, Codable, CaseIterable {
    case tokensPerCustomer = "tokens_per_customer"
    case streamsPerKey = "streams_per_key"
    case webhooks
    case eventsPerOrder = "events_per_order"
    case rate

    /// The environment variable that sets the operator's default.
    public var variable: String {
        switch self {
        case .tokensPerCustomer: "CREMA_LIMIT_TOKENS_PER_CUSTOMER"
        case .streamsPerKey: "CREMA_LIMIT_STREAMS_PER_KEY"
        case .webhooks: "CREMA_LIMIT_WEBHOOKS_PER_TENANT"
        case .eventsPerOrder: "CREMA_LIMIT_EVENTS_PER_ORDER"
        case .rate: "CREMA_RATE_LIMIT"
        }
    }
}
