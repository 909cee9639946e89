import CremaAPNsProtocol
import CremaCore
import Foundation

/// Order changes and token sets for the delivery planner's tables: each scenario is one event applied by the
/// real state machine, so the planner only ever sees transitions that can happen.
enum DeliveryScenarios {
    static let policy = DeliveryPolicy(highPriorityPerActivityPerHour: 2)
    static let now = Fixtures.now

    static let activity = PushTargetRef(kind: .liveActivity, id: 1)
    static let pushToStart = PushTargetRef(kind: .pushToStart, id: 2)
    static let alert = PushTargetRef(kind: .alert, id: 3)
    static let widget = PushTargetRef(kind: .widget, id: 4)

    /// The changes the tables cover, named as the rows read.
    enum Change: String, CaseIterable {
        case placed, started, smallDelay, largeDelay, ready, pickedUp, canceledWhileQueued, canceledWhenReady
    }

    /// Token sets the tables cover.
    enum Tokens: String, CaseIterable {
        case everything, activityOnly, activityAndAlert, pushToStartAndAlert, pushToStartOnly, alertOnly, widgetOnly, none

        var refs: [PushTargetRef] {
            switch self {
            case .everything: [activity, pushToStart, alert, widget]
            case .activityOnly: [activity]
            case .activityAndAlert: [activity, alert]
            case .pushToStartAndAlert: [pushToStart, alert]
            case .pushToStartOnly: [pushToStart]
            case .alertOnly: [alert]
            case .widgetOnly: [widget]
            case .none: []
            }
        }
    }

    static func transition(_ change: Change) -> (previous: Order?, order: Order, event: OrderEventType) {
        let placed = try! OrderStateMachine.place(Fixtures.placement(), id: Fixtures.order(in: .queued).id, number: 42, at: now)
        func apply(_ event: OrderEvent, to order: Order) -> Order {
            try! OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: now)
        }
        let preparing = apply(.started(barista: "Sam"), to: placed)
        let ready = apply(.ready(pickupPoint: "counter"), to: preparing)
        switch change {
        case .placed: return (nil, placed, .placed)
        case .started: return (placed, preparing, .started)
        case .smallDelay: return (preparing, apply(.delayed(eta: preparing.eta.addingTimeInterval(120), reason: "milk"), to: preparing), .delayed)
        case .largeDelay: return (preparing, apply(.delayed(eta: preparing.eta.addingTimeInterval(600), reason: "machine"), to: preparing), .delayed)
        case .ready: return (preparing, ready, .ready)
        case .pickedUp: return (ready, apply(.pickedUp, to: ready), .pickedUp)
        case .canceledWhileQueued: return (placed, apply(.canceled(reason: "left"), to: placed), .canceled)
        case .canceledWhenReady: return (ready, apply(.canceled(reason: "left"), to: ready), .canceled)
        }
    }

    static func context(_ change: Change, tokens: [PushTargetRef], history: [DeliveryRecord] = [], at time: Date = now) -> DeliveryContext {
        let (previous, order, event) = transition(change)
        return DeliveryContext(
            order: order, previous: previous, event: event, storeName: "Market St",
            timeZone: TimeZone(identifier: "America/Los_Angeles")!, now: time,
            targets: tokens.map { PushTarget(ref: $0, environment: .production, registeredAt: now.addingTimeInterval(-3600), bundleID: "cafe.crema.app") },
            history: history)
    }

    static func plan(_ change: Change, _ tokens: Tokens, history: [DeliveryRecord] = []) -> DeliveryPlan {
        DeliveryPlanner.plan(context(change, tokens: tokens.refs, history: history), policy: policy)
    }

    /// One line per decision, sorted: `live_activity#1 update p10 alert activity_update_urgent`,
    /// `alert#3 skip alert_shown_in_activity`. Easy to read in a table and in a failure message.
    static func summary(_ plan: DeliveryPlan) -> [String] {
        let planned = plan.deliveries.map { delivery in
            let event = delivery.liveActivityEvent.map { " \($0.rawValue)" } ?? ""
            let alert = delivery.pushType == .liveactivity && hasAlert(delivery.body) ? " alert" : ""
            return "\(delivery.target)\(event) p\(delivery.priority)\(alert) \(delivery.reason.rawValue)"
        }
        let skipped = plan.skips.map { "\($0.target.map(String.init(describing:)) ?? "order") skip \($0.reason.rawValue)" }
        return (planned + skipped).sorted()
    }

    static func hasAlert(_ body: APNsBody) -> Bool {
        let object = try! JSONSerialization.jsonObject(with: body.json) as! [String: Any]
        return (object["aps"] as! [String: Any])["alert"] != nil
    }

    static func record(
        _ id: Int64, _ target: PushTargetRef, _ pushType: APNsPushType, _ event: LiveActivityEvent? = nil,
        priority: Int? = 5, state: DeliveryState = .sent, minutesAgo: Double = 10, timestamp: Int64? = nil,
        order: UUID? = nil
    ) -> DeliveryRecord {
        let at = now.addingTimeInterval(-minutesAgo * 60)
        return DeliveryRecord(
            id: id, target: target, orderID: order ?? Fixtures.order(in: .queued).id, pushType: pushType,
            liveActivityEvent: event, priority: priority, state: state, plannedAt: at, runAt: at, apnsTimestamp: timestamp)
    }
}
