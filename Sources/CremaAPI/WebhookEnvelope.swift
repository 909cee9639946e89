public import Foundation

/// The body of every webhook request (docs/webhooks.md): `{"id","type","created_at","data"}`. `id` is also the
/// `Crema-Event-Id` header: the same event keeps it on every attempt and replay, so a receiver deduplicates by it.
public struct WebhookEnvelope<Payload: Codable & Sendable>: Codable, Sendable {
    public var id: String
    public var type: String
    public var createdAt: Date
    public var data: Payload

    enum CodingKeys: String, CodingKey { case id, type, data, createdAt = "created_at" }

    public init(id: String, type: String, createdAt: Date, data: Payload) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.data = data
    }
}

/// `order.changed`: the order as `GET /v1/orders/{id}` shows it, after the event (without its event history).
public struct OrderChangedData: Codable, Sendable {
    public var order: OrderResponse

    public init(order: OrderResponse) { self.order = order }
}

/// `activity.ended`: an order reached its end (picked up, canceled or expired), and its Live Activity with it.
public struct ActivityEndedData: Codable, Sendable {
    /// What ended and how.
    public struct Activity: Codable, Sendable {
        public var orderID: String
        public var storeID: String
        /// The order's final state: `picked_up` or `canceled`.
        public var state: String
        /// The event that ended it: `picked_up`, `canceled` or `expired`.
        public var endedBy: String
        public var endedAt: Date

        enum CodingKeys: String, CodingKey {
            case state
            case orderID = "order_id", storeID = "store_id", endedBy = "ended_by", endedAt = "ended_at"
        }

        public init(orderID: String, storeID: String, state: String, endedBy: String, endedAt: Date) {
            self.orderID = orderID
            self.storeID = storeID
            self.state = state
            self.endedBy = endedBy
            self.endedAt = endedAt
        }
    }

    public var activity: Activity

    public init(activity: Activity) { self.activity = activity }
}
