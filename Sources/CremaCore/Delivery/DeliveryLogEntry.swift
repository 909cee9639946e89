public import Foundation

/// One row of an order's delivery log: a planner decision and what came of it, as the store reads it back.
public struct DeliveryLogEntry: Sendable, Hashable {
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


    public init(
        id: Int64, orderVersion: Int, orderEvent: String?, targetKind: String?, token: String?, pushType: String?, liveActivityEvent: String?, priority: Int?, collapseID: String?, state: String, reasonCode: String, reason: String, attempts: Int, apnsStatus: Int?, apnsReason: String?, apnsID: String?, plannedAt: Date, notBefore: Date, expiresAt: Date?, sentAt: Date?, finishedAt: Date?
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
    }
}
