public import CremaAPNsProtocol
public import CremaActivityModels
public import Foundation

/// One push the planner decided to send: everything the dispatcher needs except the token, which it reads
/// from the target at send time (so a rotated token is used even for pushes planned before the rotation).
public struct PlannedDelivery: Sendable, Hashable {
    public var target: PushTargetRef
    public var pushType: APNsPushType
    public var topic: String
    public var priority: Int
    public var body: APNsBody
    public var collapseID: String?
    /// `apns-expiration`: past it, APNs stops trying (and so do we).
    public var expiration: Date
    /// Not sent before this moment (widget coalescing); usually the commit time.
    public var notBefore: Date
    public var liveActivityEvent: LiveActivityEvent?
    /// The `aps.timestamp` in the body (Live Activity pushes), kept to make the next one larger.
    public var apnsTimestamp: Int64?
    public var reason: DeliveryReason
    public var sentence: String

    public init(
        target: PushTargetRef, pushType: APNsPushType, topic: String, priority: Int, body: APNsBody, collapseID: String?,
        expiration: Date, notBefore: Date, liveActivityEvent: LiveActivityEvent?, apnsTimestamp: Int64?,
        reason: DeliveryReason, sentence: String
    ) {
        self.target = target
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.body = body
        self.collapseID = collapseID
        self.expiration = expiration
        self.notBefore = notBefore
        self.liveActivityEvent = liveActivityEvent
        self.apnsTimestamp = apnsTimestamp
        self.reason = reason
        self.sentence = sentence
    }
}

/// A deliberate decision not to push, kept so the deliveries log can say why nothing arrived.
public struct DeliverySkip: Sendable, Hashable {
    /// Nil when the skip concerns the order as a whole (no targets at all).
    public var target: PushTargetRef?
    public var pushType: APNsPushType?
    public var reason: DeliveryReason
    public var sentence: String

    public init(target: PushTargetRef?, pushType: APNsPushType?, reason: DeliveryReason, sentence: String) {
        self.target = target
        self.pushType = pushType
        self.reason = reason
        self.sentence = sentence
    }
}

/// What one order change means for the customer's devices: pushes to send, decisions not to, and older unsent
/// pushes this change makes pointless.
public struct DeliveryPlan: Sendable, Hashable {
    /// The order's Live Activity state after the change, projected once per change: every Live Activity push in
    /// `deliveries` carries it (as `content-state`, fitted into APNs' size cap), and the store keeps it with the order,
    /// so what a device shows and what `GET /v1/orders/{id}` says it shows are one value.
    public var projection: OrderActivityAttributes.ContentState
    public var deliveries: [PlannedDelivery] = []
    public var skips: [DeliverySkip] = []
    /// Outbox rows still pending that a newer push replaces (only the newest update per activity matters).
    public var superseded: [Int64] = []

    public init(
        projection: OrderActivityAttributes.ContentState, deliveries: [PlannedDelivery] = [], skips: [DeliverySkip] = [],
        superseded: [Int64] = []
    ) {
        self.projection = projection
        self.deliveries = deliveries
        self.skips = skips
        self.superseded = superseded
    }
}
