import CremaAPNsProtocol

/// Decides at send time, not only at planning time, whether an outbox row may go now: one activity's pushes
/// reach APNs one at a time and in planning order, and a push older than one planned after it never goes.
/// Pure; `DeliveryRepository.claim` and `record` run the same rules in SQL (docs/delivery.md, "Ordering").
public enum DeliveryOrdering {
    /// What a dispatcher does with a pending row.
    public enum Decision: Sendable, Hashable {
        case send
        /// Another push for the same activity is in flight, or an older one is about to be withdrawn.
        case wait
        /// Never send it: the row becomes `superseded` with this reason.
        case supersede(DeliveryReason)
    }

    /// What the rules need to know about the row's order, read at send time.
    public struct OrderFacts: Sendable, Hashable {
        /// Picked up or canceled.
        public var finished: Bool
        /// The order has an active Live Activity token: an activity is running and registered.
        public var activityRegistered: Bool

        public init(finished: Bool, activityRegistered: Bool) {
            self.finished = finished
            self.activityRegistered = activityRegistered
        }
    }

    /// The rows that belong to one activity's sequence: Live Activity pushes to one token for one order.
    /// Alerts and widget reloads have no order on the device to keep and are never held back.
    public static func sameSequence(_ a: DeliveryRecord, _ b: DeliveryRecord) -> Bool {
        a.pushType == .liveactivity && b.pushType == .liveactivity && a.target == b.target && a.orderID == b.orderID
    }

    /// States in which a row was planned and not withdrawn: it is, was, or will be at APNs.
    static func isLive(_ state: DeliveryState) -> Bool {
        switch state {
        case .pending, .inflight, .sent, .dead: true
        case .skipped, .superseded: false
        }
    }

    /// Why `row` must never be sent, whatever its state; nil when it may still go. Checked when claiming and
    /// again when a failed attempt would put the row back to pending.
    public static func staleness(of row: DeliveryRecord, among rows: [DeliveryRecord], order: OrderFacts) -> DeliveryReason? {
        guard row.pushType == .liveactivity else { return nil }
        if row.liveActivityEvent == .start {
            if order.finished { return .startOrderFinished }
            if order.activityRegistered { return .startActivityRegistered }
        }
        let newer = rows.filter { sameSequence($0, row) && $0.id > row.id && isLive($0.state) }
        guard !newer.isEmpty else { return nil }
        return newer.contains { $0.liveActivityEvent == .end } ? .supersededByEnd : .supersededByNewer
    }

    /// What to do with the pending row `row`, given every row of its order (any state).
    public static func decide(_ row: DeliveryRecord, among rows: [DeliveryRecord], order: OrderFacts) -> Decision {
        if let reason = staleness(of: row, among: rows, order: order) { return .supersede(reason) }
        guard row.pushType == .liveactivity else { return .send }
        // One at a time per activity: an older row in flight finishes (and is re-checked) first; an older pending
        // one is stale (this row is newer) and is withdrawn first.
        let busy = rows.contains { sameSequence($0, row) && $0.id != row.id && ($0.state == .inflight || $0.state == .pending) }
        return busy ? .wait : .send
    }

    /// What a row becomes after a failed attempt that the retry policy would try again.
    public static func afterFailure(_ row: DeliveryRecord, among rows: [DeliveryRecord], order: OrderFacts) -> DeliveryReason? {
        staleness(of: row, among: rows, order: order)
    }

    /// The sentence the deliveries log shows beside a send-time withdrawal (for people; may change).
    public static func sentence(for reason: DeliveryReason) -> String {
        switch reason {
        case .supersededByEnd:
            "The activity's end was planned after this push: nothing may reach an activity after its end, so this was never sent."
        case .supersededByNewer:
            "A newer push for this activity was planned before this one could go: it carries the newer state, so this was never sent."
        case .startOrderFinished:
            "The order was finished before this start could go: it would only show a finished order, so it was never sent."
        case .startActivityRegistered:
            "The app registered the started activity's token before this start went out again: a second start would open a second activity."
        default:
            "Withdrawn before it was sent."
        }
    }
}
