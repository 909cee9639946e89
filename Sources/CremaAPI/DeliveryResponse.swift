public import CremaCore
public import Foundation

/// One row of `GET /v1/orders/{id}/deliveries`: a decision and what came of it, in the API's snake_case.
public struct DeliveryResponse: Sendable, Hashable, Codable {
    public var id: Int64
    public var orderVersion: Int
    public var orderEvent: String?
    public var targetKind: String?
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
    public var apnsID: String?
    public var plannedAt: Date
    public var notBefore: Date
    public var expiresAt: Date?
    public var sentAt: Date?
    public var finishedAt: Date?

    public init(_ entry: DeliveryLogEntry) {
        id = entry.id
        orderVersion = entry.orderVersion
        orderEvent = entry.orderEvent
        targetKind = entry.targetKind
        token = entry.token
        pushType = entry.pushType
        liveActivityEvent = entry.liveActivityEvent
        priority = entry.priority
        collapseID = entry.collapseID
        state = entry.state
        reasonCode = entry.reasonCode
        reason = entry.reason
        attempts = entry.attempts
        apnsStatus = entry.apnsStatus
        apnsReason = entry.apnsReason
        apnsID = entry.apnsID
        plannedAt = entry.plannedAt
        notBefore = entry.notBefore
        expiresAt = entry.expiresAt
        sentAt = entry.sentAt
        finishedAt = entry.finishedAt
    }

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
