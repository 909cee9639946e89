public import Foundation

/// One row of an order's delivery log (`GET /v1/orders/{id}/deliveries`): a decision and what came of it.
public struct DeliveryLogEntry: Sendable, Hashable, Codable {
    public var id: Int64
    public var orderVersion: Int
    public var orderEvent: String?
    public var targetKind: String?
    /// The first characters of the token the push went (or would go) to.
    public var token: String?
    public var pushType: String?
    public var liveActivityEvent: String?
    public var priority: Int?
    public var collapseID: String?
    public var state: String
    public var reasonCode: String
    public var reason: String
    public var attempts: Int
    public var apnsStatus: Int?
    public var apnsReason: String?
    /// Lowercase, as sent in the `apns-id` header.
    public var apnsID: String?
    public var plannedAt: Date
    public var notBefore: Date
    public var expiresAt: Date?
    public var sentAt: Date?
    public var finishedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, token, priority, state, reason, attempts
        case orderVersion = "order_version"
        case orderEvent = "order_event"
        case targetKind = "target_kind"
        case pushType = "push_type"
        case liveActivityEvent = "live_activity_event"
        case collapseID = "collapse_id"
        case reasonCode = "reason_code"
        case apnsStatus = "apns_status"
        case apnsReason = "apns_reason"
        case apnsID = "apns_id"
        case plannedAt = "planned_at"
        case notBefore = "not_before"
        case expiresAt = "expires_at"
        case sentAt = "sent_at"
        case finishedAt = "finished_at"
    }
}
