public import CremaCore
public import Foundation

/// `GET /v1/me/widget`: the one order the home-screen and Apple Watch widgets should show now (null when the
/// customer has none open), and the window in which a watch relevance widget should surface it.
public struct WidgetFeedResponse: Codable, Sendable {
    /// With its stored projection; the open order nearest to pickup (a `ready` one first).
    public var order: OrderResponse?
    public var relevance: RelevanceWindow?
    /// How many open orders the customer has in all (the widget can say "+1 more").
    public var openOrders: Int

    enum CodingKeys: String, CodingKey {
        case order, relevance
        case openOrders = "open_orders"
    }

    public init(order: OrderResponse?, relevance: RelevanceWindow?, openOrders: Int) {
        self.order = order
        self.relevance = relevance
        self.openOrders = openOrders
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(order, forKey: .order)
        try c.encode(relevance, forKey: .relevance)
        try c.encode(openOrders, forKey: .openOrders)
    }
}

/// A date range for WidgetKit relevance (`RelevantContext.date(from:to:)`): the wire form of the core's
/// `RelevanceInterval`, which holds the rule.
public struct RelevanceWindow: Codable, Sendable, Hashable {
    public var start: Date
    public var end: Date

    /// Before the ETA: time to walk over; after it: time to collect a late or waiting drink.
    public static let lead: TimeInterval = RelevanceInterval.lead
    public static let trail: TimeInterval = RelevanceInterval.trail

    public init(start: Date, end: Date) {
        self.start = start
        self.end = end
    }

    public init(_ interval: RelevanceInterval) {
        self.init(start: interval.start, end: interval.end)
    }

    /// The widget's window: from `lead` before the ETA to `trail` after it; a `ready` order is relevant from when it
    /// became ready (`RelevanceInterval.widget`).
    public init(eta: Date, readySince: Date?) {
        self.init(RelevanceInterval.widget(eta: eta, readySince: readySince))
    }
}
