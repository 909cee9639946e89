public import CremaAPNsProtocol
public import CremaCore
public import Foundation

/// A store's pushes since a moment, step by step, per push type and Live Activity event: what an app team reads when
/// "APNs said 200 but my phone shows nothing" (`GET /v1/stores/{store}/funnel`). Counted from the same rows as the
/// delivery log: `planned` every push the planner decided to send (its skips are not pushes), `sent` those a
/// dispatcher took to APNs, `accepted` those APNs answered 200, `received` those with a receipt, by surface.
public struct PushFunnel: Sendable, Hashable {
    public var since: Date
    public var steps: [Step]

    public struct Step: Sendable, Hashable {
        public var pushType: APNsPushType
        public var liveActivityEvent: LiveActivityEvent?
        public var planned: Int
        public var sent: Int
        public var accepted: Int
        public var received: [ReceiptSurface: Int]
        /// Seconds from APNs' acceptance to the receipt, over the received pushes; nil when none was.
        public var receiptSecondsP50: Double?
        public var receiptSecondsP99: Double?

        public init(
            pushType: APNsPushType, liveActivityEvent: LiveActivityEvent?, planned: Int, sent: Int, accepted: Int,
            received: [ReceiptSurface: Int], receiptSecondsP50: Double?, receiptSecondsP99: Double?
        ) {
            self.pushType = pushType
            self.liveActivityEvent = liveActivityEvent
            self.planned = planned
            self.sent = sent
            self.accepted = accepted
            self.received = received
            self.receiptSecondsP50 = receiptSecondsP50
            self.receiptSecondsP99 = receiptSecondsP99
        }
    }

    public init(since: Date, steps: [Step]) {
        self.since = since
        self.steps = steps
    }
}
