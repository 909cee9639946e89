public import Foundation

/// Everything the planner looks at for one order change, read in the event's transaction.
public struct DeliveryContext: Sendable, Hashable {
    /// The order after the event.
    public var order: Order
    /// The order before the event; nil for `placed`.
    public var previous: Order?
    public var event: OrderEventType
    public var storeName: String
    public var timeZone: TimeZone
    /// The event's commit time (injected clock).
    public var now: Date
    /// The order's active tokens: its Live Activity's, and its customer's.
    public var targets: [PushTarget]
    /// Recent decisions (at least the last 24 hours) for those targets, any order.
    public var history: [DeliveryRecord]

    public init(
        order: Order, previous: Order?, event: OrderEventType, storeName: String, timeZone: TimeZone, now: Date,
        targets: [PushTarget], history: [DeliveryRecord]
    ) {
        self.order = order
        self.previous = previous
        self.event = event
        self.storeName = storeName
        self.timeZone = timeZone
        self.now = now
        self.targets = targets
        self.history = history
    }
}
