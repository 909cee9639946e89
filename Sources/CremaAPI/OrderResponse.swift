public import CremaAPNsProtocol
public import CremaCore
public import Foundation

/// The JSON shape of an order (`Order` in /openapi.yaml); every key is always present, null when empty, so
/// clients can rely on the shape.
public struct OrderResponse: Codable, Sendable {
    public var id: UUID
    public var number: Int
    public var storeID: String
    public var posRef: String
    public var customerRef: String?
    public var displayName: String
    public var locale: String
    public var items: [ItemResponse]
    public var state: OrderState
    public var version: Int
    public var eta: Date
    public var barista: String?
    public var pickupPoint: String?
    public var delayReason: String?
    public var cancelReason: String?
    public var placedAt: Date
    public var updatedAt: Date
    /// Events this build knows; a newer server's unknown event names are left out when decoding.
    public var allowedEvents: [OrderEventType]
    /// Present only on `GET /v1/orders/{id}`.
    public var events: [EventResponse]?
    /// The stored Live Activity `content-state`; only on `GET /v1/orders/{id}` and the stream (null for
    /// pre-projection rows).
    public var projection: JSONValue??

    enum CodingKeys: String, CodingKey {
        case id, number, locale, items, state, version, eta, barista, events, projection
        case storeID = "store_id", posRef = "pos_ref", customerRef = "customer_ref", displayName = "display_name"
        case pickupPoint = "pickup_point", delayReason = "delay_reason", cancelReason = "cancel_reason"
        case placedAt = "placed_at", updatedAt = "updated_at", allowedEvents = "allowed_events"
    }

    public init(_ order: Order, events: [RecordedEvent]? = nil, projection: JSONValue?? = nil) {
        self.projection = projection
        id = order.id
        number = order.number
        storeID = order.storeID
        posRef = order.posRef
        customerRef = order.customerRef
        displayName = order.displayName
        locale = order.locale
        items = order.items.map(ItemResponse.init)
        state = order.state
        version = order.version
        eta = order.eta
        barista = order.barista
        pickupPoint = order.pickupPoint
        delayReason = order.delayReason
        cancelReason = order.cancelReason
        placedAt = order.placedAt
        updatedAt = order.updatedAt
        allowedEvents = order.allowedEvents
        self.events = events?.map(EventResponse.init)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        number = try c.decode(Int.self, forKey: .number)
        storeID = try c.decode(String.self, forKey: .storeID)
        posRef = try c.decode(String.self, forKey: .posRef)
        customerRef = try c.decodeIfPresent(String.self, forKey: .customerRef)
        displayName = try c.decode(String.self, forKey: .displayName)
        locale = try c.decode(String.self, forKey: .locale)
        items = try c.decode([ItemResponse].self, forKey: .items)
        state = try c.decode(OrderState.self, forKey: .state)
        version = try c.decode(Int.self, forKey: .version)
        eta = try c.decode(Date.self, forKey: .eta)
        barista = try c.decodeIfPresent(String.self, forKey: .barista)
        pickupPoint = try c.decodeIfPresent(String.self, forKey: .pickupPoint)
        delayReason = try c.decodeIfPresent(String.self, forKey: .delayReason)
        cancelReason = try c.decodeIfPresent(String.self, forKey: .cancelReason)
        placedAt = try c.decode(Date.self, forKey: .placedAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        allowedEvents = try c.decode([String].self, forKey: .allowedEvents).compactMap(OrderEventType.init(rawValue:))
        events = try c.decodeIfPresent([EventResponse].self, forKey: .events)
        projection = c.contains(.projection) ? .some(try c.decodeIfPresent(JSONValue.self, forKey: .projection)) : nil
    }

    /// Identifiers and timestamps are written as their text directly (what `WireCoding`'s strategies would write),
    /// saving the encoder a nested container for each: every command's answer is this document.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.uuidString.lowercased(), forKey: .id)
        try c.encode(number, forKey: .number)
        try c.encode(storeID, forKey: .storeID)
        try c.encode(posRef, forKey: .posRef)
        try c.encode(customerRef, forKey: .customerRef)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(locale, forKey: .locale)
        try c.encode(items, forKey: .items)
        try c.encode(state, forKey: .state)
        try c.encode(version, forKey: .version)
        try c.encode(WireCoding.rfc3339(eta), forKey: .eta)
        try c.encode(barista, forKey: .barista)
        try c.encode(pickupPoint, forKey: .pickupPoint)
        try c.encode(delayReason, forKey: .delayReason)
        try c.encode(cancelReason, forKey: .cancelReason)
        try c.encode(WireCoding.rfc3339(placedAt), forKey: .placedAt)
        try c.encode(WireCoding.rfc3339(updatedAt), forKey: .updatedAt)
        try c.encode(allowedEvents, forKey: .allowedEvents)
        try c.encodeIfPresent(events, forKey: .events)
        if let projection { try c.encode(projection, forKey: .projection) }
    }
}

/// One line of an order as answered: every key present.
public struct ItemResponse: Codable, Sendable {
    public var name: String
    public var size: String?
    public var quantity: Int
    public var modifiers: [String]

    public init(_ item: OrderItem) {
        name = item.name
        size = item.size
        quantity = item.quantity
        modifiers = item.modifiers
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(size, forKey: .size)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(modifiers, forKey: .modifiers)
    }

    enum CodingKeys: String, CodingKey { case name, size, quantity, modifiers }
}

/// One row of an order's history. Type and role stay strings when decoding, so a client shows an event
/// its build does not know instead of refusing the whole order.
public struct EventResponse: Codable, Sendable {
    public var version: Int
    public var type: String
    public var role: String
    public var at: Date
    public var data: JSONValue

    public init(_ event: RecordedEvent) {
        version = event.version
        type = event.type.rawValue
        role = event.role.rawValue
        at = event.occurredAt
        data = event.data
    }
}

/// `{"orders":[…],"next_cursor":…}`
public struct OrderPageResponse: Codable, Sendable {
    public var orders: [OrderResponse]
    public var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case orders
        case nextCursor = "next_cursor"
    }

    public init(orders: [OrderResponse], nextCursor: String?) {
        self.orders = orders
        self.nextCursor = nextCursor
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(orders, forKey: .orders)
        try c.encode(nextCursor, forKey: .nextCursor)
    }
}

/// `{"store_id","name","timezone","ready_expiry_minutes","queued_expiry_minutes","location"?,"created_at","updated_at"}`
public struct StoreResponse: Codable, Sendable {
    public var storeID: String
    public var name: String
    public var timezone: String
    /// Minutes an order may stay ready before Crema closes it (`expired`, `not_collected`); always sent, optional
    /// only so that a client still reads an older server's store.
    public var readyExpiryMinutes: Int?
    /// Minutes an order may stay queued before Crema closes it (`expired`, `never_started`); as above.
    public var queuedExpiryMinutes: Int?
    /// The store's place; absent while it has none (so the answer of a store without one is what it always was).
    public var location: StoreLocation?
    public var createdAt: Date
    public var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case name, timezone, location
        case storeID = "store_id", createdAt = "created_at", updatedAt = "updated_at"
        case readyExpiryMinutes = "ready_expiry_minutes", queuedExpiryMinutes = "queued_expiry_minutes"
    }

    public init(_ store: Store) {
        storeID = store.id
        name = store.name
        timezone = store.timezone
        readyExpiryMinutes = store.expiryLimits.readyMinutes
        queuedExpiryMinutes = store.expiryLimits.queuedMinutes
        location = store.location
        createdAt = store.createdAt
        updatedAt = store.updatedAt
    }
}

/// `{"store":…,"columns":{"queued":[…],"preparing":[…],"ready":[…]}}`
public struct BoardResponse: Codable, Sendable {
    public var store: StoreResponse
    public var columns: [String: [OrderResponse]]

    public init(store: Store, columns: [OrderState: [Order]]) {
        self.store = StoreResponse(store)
        self.columns = Dictionary(uniqueKeysWithValues: OrderState.open.map { ($0.rawValue, (columns[$0] ?? []).map { OrderResponse($0) }) })
    }

    /// Open orders in the order a barista works through them: oldest first within the state's column.
    public func orders(in state: OrderState) -> [OrderResponse] {
        (columns[state.rawValue] ?? []).sorted { ($0.placedAt, $0.number) < ($1.placedAt, $1.number) }
    }
}
