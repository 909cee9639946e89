public import CremaAPNsProtocol
public import Foundation

/// What the last Live Activity push APNs accepted for an order carried, read from the outbox row as it was
/// sent: the event, `aps.timestamp`, the exact `content-state`, and the stale and dismissal dates if any.
public struct DeliveredActivityState: Codable, Sendable, Hashable {
    /// `start`, `update` or `end`.
    public var event: String
    /// `aps.timestamp` (Unix seconds): ActivityKit keeps the content with the highest one.
    public var timestamp: Int?
    public var contentState: JSONValue
    public var staleDate: Int?
    public var dismissalDate: Int?
    public var deliveredAt: Date

    enum CodingKeys: String, CodingKey {
        case event, timestamp
        case contentState = "content_state", staleDate = "stale_date", dismissalDate = "dismissal_date"
        case deliveredAt = "delivered_at"
    }

    public init(event: String, timestamp: Int?, contentState: JSONValue, staleDate: Int?, dismissalDate: Int?, deliveredAt: Date) {
        self.event = event
        self.timestamp = timestamp
        self.contentState = contentState
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.deliveredAt = deliveredAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(event, forKey: .event)
        try c.encode(timestamp, forKey: .timestamp)
        try c.encode(contentState, forKey: .contentState)
        try c.encode(staleDate, forKey: .staleDate)
        try c.encode(dismissalDate, forKey: .dismissalDate)
        try c.encode(deliveredAt, forKey: .deliveredAt)
    }
}
