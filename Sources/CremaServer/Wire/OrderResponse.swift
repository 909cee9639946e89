import CremaCore
import CremaStore
import Foundation

/// The JSON shape of an order (`Order` in /openapi.yaml); every key is always present.
struct OrderResponse: Encodable {
    var id: UUID
    var number: Int
    var storeID: String
    var posRef: String
    var customerRef: String?
    var displayName: String
    var locale: String
    var items: [ItemResponse]
    var state: OrderState
    var version: Int
    var eta: Date
    var barista: String?
    var pickupPoint: String?
    var delayReason: String?
    var cancelReason: String?
    var placedAt: Date
    var updatedAt: Date
    var allowedEvents: [OrderEventType]
    /// Present only on `GET /v1/orders/{id}`.
    var events: [EventResponse]?
    /// The stored Live Activity `content-state`; only on `GET /v1/orders/{id}` (null for pre-projection rows).
    var projection: JSONValue??

    enum CodingKeys: String, CodingKey {
        case id, number, locale, items, state, version, eta, barista, events, projection
        case storeID = "store_id", posRef = "pos_ref", customerRef = "customer_ref", displayName = "display_name"
        case pickupPoint = "pickup_point", delayReason = "delay_reason", cancelReason = "cancel_reason"
        case placedAt = "placed_at", updatedAt = "updated_at", allowedEvents = "allowed_events"
    }

    init(_ order: Order, events: [RecordedEvent]? = nil, projection: JSONValue?? = nil) {
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

    func encode(to encoder: any Encoder) throws {
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
        try c.encode(eta, forKey: .eta)
        try c.encode(barista, forKey: .barista)
        try c.encode(pickupPoint, forKey: .pickupPoint)
        try c.encode(delayReason, forKey: .delayReason)
        try c.encode(cancelReason, forKey: .cancelReason)
        try c.encode(placedAt, forKey: .placedAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(allowedEvents, forKey: .allowedEvents)
        try c.encodeIfPresent(events, forKey: .events)
        if let projection { try c.encode(projection, forKey: .projection) }
    }
}

struct ItemResponse: Encodable {
    var name: String
    var size: String?
    var quantity: Int
    var modifiers: [String]

    init(_ item: OrderItem) {
        name = item.name
        size = item.size
        quantity = item.quantity
        modifiers = item.modifiers
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(size, forKey: .size)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(modifiers, forKey: .modifiers)
    }

    enum CodingKeys: String, CodingKey { case name, size, quantity, modifiers }
}

struct EventResponse: Encodable {
    var version: Int
    var type: OrderEventType
    var role: Role
    var at: Date
    var data: JSONValue

    init(_ event: RecordedEvent) {
        version = event.version
        type = event.type
        role = event.role
        at = event.occurredAt
        data = event.data
    }
}

/// `{"orders":[…],"next_cursor":…}`
struct OrderPageResponse: Encodable {
    var orders: [OrderResponse]
    var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case orders
        case nextCursor = "next_cursor"
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(orders, forKey: .orders)
        try c.encode(nextCursor, forKey: .nextCursor)
    }
}

/// `{"store_id","name","timezone","created_at","updated_at"}`
struct StoreResponse: Encodable {
    var storeID: String
    var name: String
    var timezone: String
    var createdAt: Date
    var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case name, timezone
        case storeID = "store_id", createdAt = "created_at", updatedAt = "updated_at"
    }

    init(_ store: Store) {
        storeID = store.id
        name = store.name
        timezone = store.timezone
        createdAt = store.createdAt
        updatedAt = store.updatedAt
    }
}

/// `{"store":…,"columns":{"queued":[…],"preparing":[…],"ready":[…]}}`
struct BoardResponse: Encodable {
    var store: StoreResponse
    var columns: [String: [OrderResponse]]

    init(_ board: Board) {
        store = StoreResponse(board.store)
        columns = Dictionary(uniqueKeysWithValues: OrderState.open.map { ($0.rawValue, (board.columns[$0] ?? []).map { OrderResponse($0) }) })
    }
}
