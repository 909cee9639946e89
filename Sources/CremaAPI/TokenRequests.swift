public import CremaAPNsProtocol
public import Foundation

/// `PUT /v1/orders/{id}/live-activity-token` and `PUT /v1/me/orders/{id}/live-activity-token`.
public struct ActivityTokenRequest: Codable, Sendable {
    public var token: String
    public var environment: APNsEnvironment
    /// The app the token came from; absent: the tenant's default app.
    public var bundleID: String?
    /// `ActivityAuthorizationInfo().frequentPushesEnabled` on the device; absent means true, Apple's default. False
    /// keeps priority 10 for what must wake the customer (docs/delivery.md, "Frequent updates off").
    public var frequentUpdates: Bool?

    enum CodingKeys: String, CodingKey {
        case token, environment
        case bundleID = "bundle_id"
        case frequentUpdates = "frequent_updates"
    }

    public init(token: String, environment: APNsEnvironment, bundleID: String? = nil, frequentUpdates: Bool? = nil) {
        self.token = token
        self.environment = environment
        self.bundleID = bundleID
        self.frequentUpdates = frequentUpdates
    }
}

/// `PUT /v1/customers/{ref}/tokens/{kind}/{token}`: the environment, and the token this one rotates from.
public struct CustomerTokenRequest: Codable, Sendable {
    public var environment: APNsEnvironment
    public var replaces: String?
    /// The app the token came from; absent: the tenant's default app.
    public var bundleID: String?

    enum CodingKeys: String, CodingKey {
        case environment, replaces
        case bundleID = "bundle_id"
    }

    public init(environment: APNsEnvironment, replaces: String? = nil, bundleID: String? = nil) {
        self.environment = environment
        self.replaces = replaces
        self.bundleID = bundleID
    }
}

/// What a token registration answers: never the whole token.
public struct TokenResponse: Codable, Sendable {
    public var kind: String
    /// Lowercase, as every id in the API.
    public var orderID: String?
    public var customerRef: String?
    public var environment: APNsEnvironment
    /// The first characters only.
    public var token: String
    public var created: Bool

    enum CodingKeys: String, CodingKey {
        case kind, environment, token, created
        case orderID = "order_id"
        case customerRef = "customer_ref"
    }

    public init(kind: String, orderID: UUID? = nil, customerRef: String? = nil, environment: APNsEnvironment, redactedToken: String, created: Bool) {
        self.kind = kind
        self.orderID = orderID?.uuidString.lowercased()
        self.customerRef = customerRef
        self.environment = environment
        token = redactedToken
        self.created = created
    }
}

/// `GET /v1/orders/{id}/deliveries`.
public struct DeliveriesResponse: Codable, Sendable {
    public var orderID: String
    public var deliveries: [DeliveryResponse]

    public init(orderID: UUID, deliveries: [DeliveryResponse]) {
        self.orderID = orderID.uuidString.lowercased()
        self.deliveries = deliveries
    }

    enum CodingKeys: String, CodingKey {
        case orderID = "order_id"
        case deliveries
    }
}
