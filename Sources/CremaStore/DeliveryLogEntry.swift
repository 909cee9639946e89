public import CremaAPNsProtocol
public import CremaCore
public import Foundation

/// One row of an order's delivery log, as the store reads it back: a planner decision and what came of it. Typed
/// where the column holds one of the core's values (the event, the target's kind, the push type, the Live Activity
/// event, the outbox state), so a reader cannot misspell them; the API writes them as their raw values.
public struct DeliveryLogEntry: Sendable, Hashable {
    public var id: Int64
    public var orderVersion: Int
    public var orderEvent: OrderEventType?
    public var targetKind: PushTargetKind?
    /// The first characters of the token the push went (or would go) to, followed by "…".
    public var token: String?
    public var pushType: APNsPushType?
    public var liveActivityEvent: LiveActivityEvent?
    public var priority: Int?
    public var collapseID: String?
    public var state: DeliveryState
    /// A `DeliveryReason` the planner gave, or the code the dispatcher withdrew the push with: text, since both write it.
    public var reasonCode: String
    public var reason: String
    public var attempts: Int
    public var apnsStatus: Int?
    public var apnsReason: String?
    /// The `apns-id` APNs answered with.
    public var apnsID: UUID?
    public var plannedAt: Date
    public var notBefore: Date
    public var expiresAt: Date?
    public var sentAt: Date?
    public var finishedAt: Date?
    /// The delivery's first receipt: when the phone got it and how Crema knows.
    public var receivedAt: Date?
    public var receiptSurface: ReceiptSurface?

    public init(
        id: Int64, orderVersion: Int, orderEvent: OrderEventType?, targetKind: PushTargetKind?, token: String?, pushType: APNsPushType?,
        liveActivityEvent: LiveActivityEvent?, priority: Int?, collapseID: String?, state: DeliveryState, reasonCode: String, reason: String,
        attempts: Int, apnsStatus: Int?, apnsReason: String?, apnsID: UUID?, plannedAt: Date, notBefore: Date, expiresAt: Date?, sentAt: Date?,
        finishedAt: Date?, receivedAt: Date? = nil, receiptSurface: ReceiptSurface? = nil
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
}
