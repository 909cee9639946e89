public import CremaCore

/// An order's last change as `OrderRepository.lastChange` reads it back: what the event's own transaction gave the
/// planner, so `GET /v1/orders/{id}/preview` can ask the planner the same question again.
public struct LastChange: Sendable {
    /// The order now, after its last event.
    public var order: Order
    /// The order before its last event; nil when that event is `placed`, or when the history (older than this version's
    /// events, or with a record it cannot read) does not replay to the order.
    public var previous: Order?
    public var event: OrderEventType
    /// The store, the order's targets now and their decisions of the last day before its last event's own.
    public var inputs: OrderTransaction.PlanningInputs
}
