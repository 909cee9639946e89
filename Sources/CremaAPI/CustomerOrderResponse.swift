import Foundation

/// `GET /v1/me/orders/{id}`: the order with its stored projection, and what its Live Activity was last told,
/// so the app can reconcile its running activities on launch (and end those of finished orders).
public struct CustomerOrderResponse: Codable, Sendable {
    public var order: OrderResponse
    /// The last Live Activity push APNs accepted for this order; null when none was delivered yet.
    public var lastDelivered: DeliveredActivityState?

    enum CodingKeys: String, CodingKey {
        case order
        case lastDelivered = "last_delivered"
    }

    public init(order: OrderResponse, lastDelivered: DeliveredActivityState?) {
        self.order = order
        self.lastDelivered = lastDelivered
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(order, forKey: .order)
        try c.encode(lastDelivered, forKey: .lastDelivered)
    }
}

/// `GET /v1/me/orders`: the customer's open orders and those finished recently, newest first, each with its
/// stored projection.
public struct CustomerOrdersResponse: Codable, Sendable {
    public var orders: [OrderResponse]

    public init(orders: [OrderResponse]) { self.orders = orders }
}
