public import Foundation

/// The order life cycle of docs/design.md §3 as pure functions: no I/O, the clock and IDs come from the caller.
public enum OrderStateMachine {
    /// The state an event leads to from `state`, or nil when the event is not allowed there.
    /// `nil` as the source state means "no order yet", where only `placed` is allowed.
    public static func target(of event: OrderEventType, from state: OrderState?) -> OrderState? {
        switch (state, event) {
        case (nil, .placed): .queued
        case (nil, _): nil
        case (.some, .placed): nil
        case (.queued, .started): .preparing
        case (.queued, .delayed): .queued
        case (.preparing, .delayed): .preparing
        case (.queued, .ready), (.preparing, .ready): .ready
        case (.ready, .pickedUp): .pickedUp
        case (.queued, .canceled), (.preparing, .canceled), (.ready, .canceled): .canceled
        // An expired order ends as canceled: the wire status (and the app's decoder) stays as it is, and the
        // event (`expired`, by `system`, with its reason) tells the two apart (docs/decisions.md, "Data lifecycle").
        case (.queued, .expired), (.ready, .expired): .canceled
        case (.some, _): nil
        }
    }

    /// Every event a client may send from `state`, in declaration order; empty for terminal states. System-only
    /// events (`expired`) are left out: no client can send them.
    public static func allowedEvents(from state: OrderState?) -> [OrderEventType] {
        OrderEventType.allCases.filter { !$0.isSystemOnly && target(of: $0, from: state) != nil }
    }

    /// Creates the order a `placed` event describes, after validating it.
    public static func place(
        _ placement: OrderPlacement,
        id: UUID,
        number: Int,
        at now: Date
    ) throws(OrderError) -> Order {
        try OrderValidation.validate(placement, now: now)
        return Order(
            id: id,
            storeID: placement.storeID,
            number: number,
            posRef: placement.posRef,
            customerRef: placement.customerRef,
            displayName: placement.displayName,
            locale: OrderLocale.normalized(placement.locale),
            items: placement.items,
            eta: placement.eta,
            state: .queued,
            version: 1,
            placedAt: now,
            updatedAt: now
        )
    }

    /// Applies an event to an order: checks the expected version, the transition and the event's fields,
    /// and returns the order as it is after the event.
    public static func apply(
        _ event: OrderEvent,
        to order: Order,
        expectedVersion: Int?,
        at now: Date
    ) throws(OrderError) -> Order {
        if let expectedVersion, expectedVersion != order.version {
            throw .versionConflict(expected: expectedVersion, actual: order.version, state: order.state)
        }
        guard let next = target(of: event.type, from: order.state) else {
            throw .invalidTransition(from: order.state, event: event.type, allowed: order.allowedEvents)
        }
        try OrderValidation.validate(event, order: order, now: now)
        return advance(order, by: event, to: next, at: now)
    }

    /// The order before its last event, replayed from its history: the order as placement made it (with
    /// `placedETA`, the ETA the `placed` event set), then each later event in `events` but the last, oldest first with
    /// its time, through `target(of:from:)` and the same changes `apply` makes. The checks `apply` made when each event
    /// was accepted are not made again: history is what it is, and a rule added since (or an erasure that blanked a
    /// reason) must not make it unreadable. Nil when the last event is `placed` (there was no order before it), or when
    /// the history does not lead to `order`'s version and state.
    ///
    /// `GET /v1/orders/{id}/preview` plans the order's last change again with it, so the planner sees the same
    /// previous order it saw when the event was applied.
    public static func previous(of order: Order, placedETA: Date, events: [(event: OrderEvent, at: Date)]) -> Order? {
        guard let last = events.last, events.count == order.version - 1 else { return nil }
        var replayed = order
        replayed.state = .queued
        replayed.version = 1
        replayed.eta = placedETA
        replayed.barista = nil
        replayed.pickupPoint = nil
        replayed.delayReason = nil
        replayed.cancelReason = nil
        replayed.updatedAt = order.placedAt
        for (event, at) in events.dropLast() {
            guard let next = target(of: event.type, from: replayed.state) else { return nil }
            replayed = advance(replayed, by: event, to: next, at: at)
        }
        guard target(of: last.event.type, from: replayed.state) == order.state else { return nil }
        return replayed
    }

    /// What an accepted event changes in the order: its state, version and time, and the fields the event carries.
    private static func advance(_ order: Order, by event: OrderEvent, to next: OrderState, at now: Date) -> Order {
        var updated = order
        updated.state = next
        updated.version += 1
        updated.updatedAt = now
        switch event {
        case .started(let barista):
            updated.barista = barista
        case .delayed(let eta, let reason):
            updated.eta = eta
            updated.delayReason = reason
        case .ready(let pickupPoint):
            updated.pickupPoint = pickupPoint
        case .pickedUp:
            break
        case .canceled(let reason):
            updated.cancelReason = reason
        case .expired:
            // The reason stays in the event (a code); `cancel_reason` is free text from people.
            break
        }
        return updated
    }
}
