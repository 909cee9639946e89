import CremaCore
import CremaStore
import Foundation

/// `PUT /v1/orders/{id}/live-activity-token`.
struct ActivityTokenRequest: Codable, Sendable {
    var token: String
    var environment: APNsEnvironment
}

/// `PUT /v1/customers/{ref}/tokens/{kind}/{token}`: the environment, and the token this one rotates from.
struct CustomerTokenRequest: Codable, Sendable {
    var environment: APNsEnvironment
    var replaces: String?
}

/// What a token registration answers: never the whole token.
struct TokenResponse: Encodable, Sendable {
    var kind: String
    /// Lowercase, as every id in the API.
    var orderID: String?
    var customerRef: String?
    var environment: APNsEnvironment
    var token: String
    var created: Bool

    enum CodingKeys: String, CodingKey {
        case kind, environment, token, created
        case orderID = "order_id"
        case customerRef = "customer_ref"
    }

    init(_ registered: RegisteredToken, orderID: UUID? = nil, customerRef: String? = nil) {
        kind = registered.ref.kind.rawValue
        self.orderID = orderID?.uuidString.lowercased()
        self.customerRef = customerRef
        environment = registered.environment
        token = registered.redactedToken
        created = registered.created
    }
}

/// `GET /v1/orders/{id}/deliveries`.
struct DeliveriesResponse: Encodable, Sendable {
    var orderID: String
    var deliveries: [DeliveryLogEntry]

    init(orderID: UUID, deliveries: [DeliveryLogEntry]) {
        self.orderID = orderID.uuidString.lowercased()
        self.deliveries = deliveries
    }

    enum CodingKeys: String, CodingKey {
        case orderID = "order_id"
        case deliveries
    }
}
