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
    /// When the phone got the push, by its first receipt (absent: no receipt, which is not proof it did not arrive).
    public var receivedAt: Date?
    /// How Crema knows (`notification`, `activity`, `app` posted by the app; `activity_token`, `widget_fetch` inferred).
    public var receiptSurface: String?

    public init(
        id: Int64, orderVersion: Int, orderEvent: String?, targetKind: String?, token: String?, pushType: String?, liveActivityEvent: String?,
        priority: Int?, collapseID: String?, state: String, reasonCode: String, reason: String, attempts: Int, apnsStatus: Int?,
        apnsReason: String?, apnsID: String?, plannedAt: Date, notBefore: Date, expiresAt: Date?, sentAt: Date?, finishedAt: Date?,
        receivedAt: Date? = nil, receiptSurface: String? = nil
    ) {
        self.id = id
        self.orderVersion = orderVersion
        self.orderEvent = orderEvent
        self.targetKind = targetKind
        self.token = token
        self.pushType = pushType
        self.liveActivityEvent = liveActivityEvent
        self.priority = priority
        self.collapseID = collapseID
        self.state = state
        self.reasonCode = reasonCode
        self.reason = reason
        self.attempts = attempts
        self.apnsStatus = apnsStatus
        self.apnsReason = apnsReason
        self.apnsID = apnsID
        self.plannedAt = plannedAt
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.sentAt = sentAt
        self.finishedAt = finishedAt
        self.receivedAt = receivedAt
        self.receiptSurface = receiptSurface
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
        case receivedAt = "received_at"
        case receiptSurface = "receipt_surface"
    }
}
