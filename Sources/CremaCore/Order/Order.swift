public import Foundation

/// An order's current state: the fold of its events, stored beside them in one transaction.
public struct Order: Sendable, Hashable {
    public var id: UUID
    public var storeID: String
    /// The number printed on the cup; increasing per store.
    public var number: Int
    public var posRef: String
    public var customerRef: String?
    public var displayName: String
    public var locale: String
    public var items: [OrderItem]
    public var eta: Date
    public var state: OrderState
    /// How many events the order has accepted; `expected_version` is checked against it.
    public var version: Int
    public var barista: String?
    public var pickupPoint: String?
    public var delayReason: String?
    public var cancelReason: String?
    public var placedAt: Date
    public var updatedAt: Date

    public init(
        id: UUID,
        storeID: String,
        number: Int,
        posRef: String,
        customerRef: String?,
        displayName: String,
        locale: String,
        items: [OrderItem],
        eta: Date,
        state: OrderState,
        version: Int,
        barista: String? = nil,
        pickupPoint: String? = nil,
        delayReason: String? = nil,
        cancelReason: String? = nil,
        placedAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.storeID = storeID
        self.number = number
        self.posRef = posRef
        self.customerRef = customerRef
        self.displayName = displayName
        self.locale = locale
        self.items = items
        self.eta = eta
        self.state = state
        self.version = version
        self.barista = barista
        self.pickupPoint = pickupPoint
        self.delayReason = delayReason
        self.cancelReason = cancelReason
        self.placedAt = placedAt
        self.updatedAt = updatedAt
    }

    /// The events this order accepts now, in declaration order.
    public var allowedEvents: [OrderEventType] { OrderStateMachine.allowedEvents(from: state) }
}
