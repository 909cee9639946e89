public import Foundation

/// When an order matters to its customer, for WidgetKit's relevance (`RelevantContext.date(from:to:)`): the one
/// definition behind `GET /v1/me/relevance`, the window of `GET /v1/me/widget`, and the widget push the planner
/// sends when it moves (docs/customer-api.md, "Relevance"). Pure: a function of the order as it stands; the clock
/// enters only through the order's own times (placed, became ready), so the interval changes exactly when an event
/// changes it, and a push can say so.
public struct RelevanceInterval: Sendable, Hashable {
    public var start: Date
    public var end: Date

    /// Before the ETA: time to walk over (the widget's window opens then).
    public static let lead: TimeInterval = 15 * 60
    /// After the ETA, or after the order became ready when that is later: time to collect a late or waiting drink.
    public static let trail: TimeInterval = 30 * 60

    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }

    /// The end of the pickup window: `trail` after the ETA, or after the order became ready if that came later.
    /// A ready order's last event is `ready`, so its `updatedAt` is when it became ready.
    public static func pickupWindowEnd(_ order: Order) -> Date {
        max(order.eta, readySince(order) ?? order.eta).addingTimeInterval(trail)
    }

    /// The order's relevance for the watch: from when it was placed to the end of its pickup window; nil once the
    /// order is finished (picked up, canceled or expired), when it matters no more. An ETA already past at placement
    /// (the API accepts one up to an hour back) gives an empty interval at placement, never one that ends first.
    public static func of(_ order: Order) -> RelevanceInterval? {
        guard !order.state.isTerminal else { return nil }
        return RelevanceInterval(start: order.placedAt, end: max(order.placedAt, pickupWindowEnd(order)))
    }

    /// The narrower window the widget feed gives (`GET /v1/me/widget`): from `lead` before the ETA, or from when the
    /// order became ready if that was earlier, to the same end as `of`.
    public static func widget(eta: Date, readySince: Date?) -> RelevanceInterval {
        RelevanceInterval(
            start: min(eta.addingTimeInterval(-lead), readySince ?? .distantFuture),
            end: max(eta, readySince ?? eta).addingTimeInterval(trail))
    }

    /// `widget(eta:readySince:)` for an order as it stands.
    public static func widget(_ order: Order) -> RelevanceInterval {
        widget(eta: order.eta, readySince: readySince(order))
    }

    /// When the order became ready, while it is ready.
    public static func readySince(_ order: Order) -> Date? {
        order.state == .ready ? order.updatedAt : nil
    }

    /// Whether an event moved the interval of an order that stays open (a delay moves the ETA; a late `ready`
    /// moves the end). An order appearing (`placed`) or finishing is not a move: those change what every widget
    /// shows, and are planned as such.
    public static func moved(from previous: Order?, to order: Order) -> Bool {
        guard let previous, let before = of(previous), let after = of(order) else { return false }
        return before != after
    }
}
