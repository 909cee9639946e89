public import CremaCore
public import Foundation

/// `POST /v1/orders`: the `placed` event as the POS sends it.
public struct PlaceOrderRequest: Codable, Sendable {
    public var storeID: String
    public var posRef: String
    public var customerRef: String?
    public var displayName: String
    public var locale: String
    public var items: [ItemRequest]
    public var eta: Date

    enum CodingKeys: String, CodingKey {
        case locale, items, eta
        case storeID = "store_id", posRef = "pos_ref", customerRef = "customer_ref", displayName = "display_name"
    }

    public init(
        storeID: String, posRef: String, customerRef: String? = nil, displayName: String, locale: String, items: [ItemRequest], eta: Date
    ) {
        self.storeID = storeID
        self.posRef = posRef
        self.customerRef = customerRef
        self.displayName = displayName
        self.locale = locale
        self.items = items
        self.eta = eta
    }

    public var placement: OrderPlacement {
        OrderPlacement(
            storeID: storeID, posRef: posRef, customerRef: customerRef, displayName: displayName, locale: locale,
            items: items.map { OrderItem(name: $0.name, size: $0.size, quantity: $0.quantity ?? 1, modifiers: $0.modifiers ?? []) },
            eta: eta)
    }
}

/// One line of `PlaceOrderRequest.items`; quantity defaults to 1 and modifiers to none.
public struct ItemRequest: Codable, Sendable {
    public var name: String
    public var size: String?
    public var quantity: Int?
    public var modifiers: [String]?

    public init(name: String, size: String? = nil, quantity: Int? = nil, modifiers: [String]? = nil) {
        self.name = name
        self.size = size
        self.quantity = quantity
        self.modifiers = modifiers
    }
}

/// `POST /v1/orders/{id}/events`: `{"type":…, "expected_version":…, …what the type carries}`.
public struct OrderEventRequest: Codable, Sendable {
    public var type: String
    public var expectedVersion: Int?
    public var barista: String?
    public var eta: Date?
    public var reason: String?
    public var pickupPoint: String?

    enum CodingKeys: String, CodingKey {
        case type, barista, eta, reason
        case expectedVersion = "expected_version", pickupPoint = "pickup_point"
    }

    public init(
        type: String, expectedVersion: Int? = nil, barista: String? = nil, eta: Date? = nil, reason: String? = nil,
        pickupPoint: String? = nil
    ) {
        self.type = type
        self.expectedVersion = expectedVersion
        self.barista = barista
        self.eta = eta
        self.reason = reason
        self.pickupPoint = pickupPoint
    }

    /// The event this request describes; a missing field the type requires is a 400 naming it.
    public func event() throws(APIError) -> OrderEvent {
        guard let type = OrderEventType(rawValue: type), type != .placed, !type.isSystemOnly else {
            let names = OrderEventType.allCases.filter { $0 != .placed && !$0.isSystemOnly }.map(\.rawValue).joined(separator: ", ")
            throw .invalidField(field: "type", reason: "must be one of \(names) (orders are placed with POST /v1/orders)")
        }
        if let expectedVersion, expectedVersion < 1 {
            throw .invalidField(field: "expected_version", reason: "must be a positive integer")
        }
        switch type {
        case .placed, .expired: preconditionFailure("refused above")
        case .started: return .started(barista: try required(barista, "barista"))
        case .delayed: return .delayed(eta: try required(eta, "eta"), reason: reason)
        case .ready: return .ready(pickupPoint: pickupPoint)
        case .pickedUp: return .pickedUp
        case .canceled: return .canceled(reason: try required(reason, "reason"))
        }
    }

    private func required<T>(_ value: T?, _ field: String) throws(APIError) -> T {
        guard let value else { throw .invalidField(field: field, reason: "is required for a \(type) event") }
        return value
    }
}

/// `PUT /v1/stores/{store}`. An absent expiry limit keeps the store's current one (the default for a new store).
public struct StorePutRequest: Codable, Sendable {
    public var name: String
    public var timezone: String?
    public var readyExpiryMinutes: Int?
    public var queuedExpiryMinutes: Int?
    /// The store's place: absent (nil) keeps the stored one, `null` (`.some(nil)`) clears it, a value replaces it.
    /// Checked by `StoreLocation.validated` before it is stored.
    public var location: StoreLocation??

    enum CodingKeys: String, CodingKey {
        case name, timezone, location
        case readyExpiryMinutes = "ready_expiry_minutes", queuedExpiryMinutes = "queued_expiry_minutes"
    }

    public init(
        name: String, timezone: String? = nil, readyExpiryMinutes: Int? = nil, queuedExpiryMinutes: Int? = nil,
        location: StoreLocation?? = nil
    ) {
        self.name = name
        self.timezone = timezone
        self.readyExpiryMinutes = readyExpiryMinutes
        self.queuedExpiryMinutes = queuedExpiryMinutes
        self.location = location
    }

    /// Written by hand for `location` only: a synthesized decoder reads an explicit `null` as absent.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        timezone = try c.decodeIfPresent(String.self, forKey: .timezone)
        readyExpiryMinutes = try c.decodeIfPresent(Int.self, forKey: .readyExpiryMinutes)
        queuedExpiryMinutes = try c.decodeIfPresent(Int.self, forKey: .queuedExpiryMinutes)
        if c.contains(.location) {
            location = .some(try c.decodeNil(forKey: .location) ? nil : try c.decode(StoreLocation.self, forKey: .location))
        } else {
            location = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(timezone, forKey: .timezone)
        try c.encodeIfPresent(readyExpiryMinutes, forKey: .readyExpiryMinutes)
        try c.encodeIfPresent(queuedExpiryMinutes, forKey: .queuedExpiryMinutes)
        if let location { try c.encode(location, forKey: .location) }
    }
}
