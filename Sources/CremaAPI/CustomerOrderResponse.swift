import Foundation

/// `GET /v1/me/orders/{id}`: the order with its stored projection, and what its Live Activity was last told,
/// so the app can reconcile its running activities on launch (and end those of finished orders).
public struct CustomerOrderResponse: Codable, Sendable {
    public var order: OrderResponse
    /// The last Live Activity push APNs accepted for this order; null when none was delivered yet.
    public var lastDelivered: DeliveredActivityState?
    /// What the app said about frequent updates when it registered this order's Live Activity token (absent in that
    /// call: true); null while no token is registered. False: routine updates and delays go at priority 5.
    public var frequentUpdates: Bool?

    enum CodingKeys: String, CodingKey {
        case order
        case lastDelivered = "last_delivered"
        case frequentUpdates = "frequent_updates"
    }

    public init(order: OrderResponse, lastDelivered: DeliveredActivityState?, frequentUpdates: Bool? = nil) {
        self.order = order
        self.lastDelivered = lastDelivered
        self.frequentUpdates = frequentUpdates
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(order, forKey: .order)
        try c.encode(lastDelivered, forKey: .lastDelivered)
        try c.encode(frequentUpdates, forKey: .frequentUpdates)
    }
}

/// `GET /v1/me/orders`: the customer's open orders and those finished recently, newest first, each with its
/// stored projection.
public struct CustomerOrdersResponse: Codable, Sendable {
    public var orders: [OrderResponse]

    public init(orders: [OrderResponse]) { self.orders = orders }
}
