public import CremaAPNsProtocol
public import Foundation

/// One earlier decision for a target, as the planner needs to know it: budgets count these, newer updates
/// supersede the unsent ones, and `timestamp`s keep rising from the last one.
public struct DeliveryRecord: Sendable, Hashable {
    public var id: Int64
    public var target: PushTargetRef
    public var orderID: UUID
    public var pushType: APNsPushType
    public var liveActivityEvent: LiveActivityEvent?
    public var priority: Int?
    public var state: DeliveryState
    /// When it was planned (the event's commit).
    public var plannedAt: Date
    /// When it may be sent (not-before).
    public var runAt: Date
    /// The `aps.timestamp` it carries (Live Activity pushes), Unix seconds.
    public var apnsTimestamp: Int64?

    public init(
        id: Int64, target: PushTargetRef, orderID: UUID, pushType: APNsPushType, liveActivityEvent: LiveActivityEvent? = nil,
        priority: Int?, state: DeliveryState, plannedAt: Date, runAt: Date? = nil, apnsTimestamp: Int64? = nil
    ) {
        self.id = id
        self.target = target
        self.orderID = orderID
        self.pushType = pushType
        self.liveActivityEvent = liveActivityEvent
        self.priority = priority
        self.state = state
        self.plannedAt = plannedAt
        self.runAt = runAt ?? plannedAt
        self.apnsTimestamp = apnsTimestamp
    }
}

/// Where an outbox row is in its life: `pending → inflight → sent | dead`; `skipped` and `superseded` rows are
/// decisions kept for the deliveries log and never sent.
public enum DeliveryState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending
    case inflight
    case sent
    case dead
    case skipped
    case superseded

    /// Spent (or about to spend) part of a device's budget: planned and not withdrawn.
    public var countsAgainstBudget: Bool {
        switch self {
        case .pending, .inflight, .sent: true
        case .dead, .skipped, .superseded: false
        }
    }
}
