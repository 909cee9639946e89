import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// Every change × every token set, with no earlier deliveries: the whole starting policy of docs/design.md §5 in one
/// table. Budget and history situations are in `DeliveryPlannerBudgetTests`.
@Suite struct DeliveryPlannerTableTests {
    typealias Change = DeliveryScenarios.Change
    typealias Tokens = DeliveryScenarios.Tokens

    static let la = "live_activity#1"
    static let p2s = "push_to_start#2"
    static let alert = "alert#3"
    static let widget = "widget#4"

    /// Expected decisions, sorted as `DeliveryScenarios.summary` sorts them.
    static let table: [Change: [Tokens: [String]]] = {
        // What a widget token gets: a reload when what it shows changes, or when the order's relevance interval moves.
        let shows = "\(widget) p5 widget_changed"
        let moves = "\(widget) p5 widget_relevance_changed"
        let unchanged = "\(widget) skip widget_unchanged"
        let routineWithWidget: (String) -> [Tokens: [String]] = { w in
            return [
                .everything: ["\(la) update p5 activity_update", "\(alert) skip alert_not_needed", w],
                .activityOnly: ["\(la) update p5 activity_update"],
                .activityAndAlert: ["\(la) update p5 activity_update", "\(alert) skip alert_not_needed"],
                .pushToStartAndAlert: ["\(p2s) start p10 alert activity_start", "\(alert) skip alert_not_needed"],
                .pushToStartOnly: ["\(p2s) start p10 alert activity_start"],
                .alertOnly: ["\(alert) skip alert_not_needed"],
                .widgetOnly: [w],
                .none: ["order skip no_targets"],
            ]
        }
        let urgent: (Int, String) -> [Tokens: [String]] = { alertPriority, w in
            return [
                .everything: ["\(la) update p10 alert activity_update_urgent", "\(alert) skip alert_shown_in_activity", w],
                .activityOnly: ["\(la) update p10 alert activity_update_urgent"],
                .activityAndAlert: ["\(la) update p10 alert activity_update_urgent", "\(alert) skip alert_shown_in_activity"],
                .pushToStartAndAlert: ["\(p2s) start p10 alert activity_start", "\(alert) skip alert_shown_in_activity"],
                .pushToStartOnly: ["\(p2s) start p10 alert activity_start"],
                .alertOnly: ["\(alert) p\(alertPriority) alert_no_activity"],
                .widgetOnly: ["order skip no_alert_target", w],
                .none: ["order skip no_targets"],
            ]
        }
        let canceled: [Tokens: [String]] = [
            .everything: ["\(la) end p10 alert activity_end", "\(alert) skip alert_shown_in_activity", "\(widget) p5 widget_changed"],
            .activityOnly: ["\(la) end p10 alert activity_end"],
            .activityAndAlert: ["\(la) end p10 alert activity_end", "\(alert) skip alert_shown_in_activity"],
            .pushToStartAndAlert: ["\(alert) p10 alert_no_activity", "\(p2s) skip start_not_useful"],
            .pushToStartOnly: ["order skip no_alert_target", "\(p2s) skip start_not_useful"],
            .alertOnly: ["\(alert) p10 alert_no_activity"],
            .widgetOnly: ["order skip no_alert_target", "\(widget) p5 widget_changed"],
            .none: ["order skip no_targets"],
        ]
        return [
            .placed: routineWithWidget(shows),
            .started: routineWithWidget(unchanged),
            // A delay moves the ETA, so the end of the pickup window; ready before the ETA leaves the window as it was.
            .smallDelay: routineWithWidget(moves),
            .largeDelay: urgent(5, moves),
            .ready: urgent(10, shows),
            .pickedUp: [
                .everything: ["\(la) end p5 activity_end", "\(alert) skip alert_not_needed", "\(widget) p5 widget_changed"],
                .activityOnly: ["\(la) end p5 activity_end"],
                .activityAndAlert: ["\(la) end p5 activity_end", "\(alert) skip alert_not_needed"],
                .pushToStartAndAlert: ["\(alert) skip alert_not_needed", "\(p2s) skip start_not_useful"],
                .pushToStartOnly: ["\(p2s) skip start_not_useful"],
                .alertOnly: ["\(alert) skip alert_not_needed"],
                .widgetOnly: ["\(widget) p5 widget_changed"],
                .none: ["order skip no_targets"],
            ],
            .canceledWhileQueued: canceled,
            .canceledWhenReady: canceled,
        ]
    }()

    static let rows: [(Change, Tokens)] = Change.allCases.flatMap { change in Tokens.allCases.map { (change, $0) } }

    @Test("each change with each token set plans exactly the table's decisions", arguments: rows)
    func plansTheTable(change: Change, tokens: Tokens) throws {
        let expected = try #require(Self.table[change]?[tokens])
        #expect(DeliveryScenarios.summary(DeliveryScenarios.plan(change, tokens)) == expected.sorted())
    }

    @Test("the table covers every change and every token set")
    func tableIsComplete() {
        for change in Change.allCases {
            #expect(Set(Self.table[change]?.keys.map { $0 } ?? []) == Set(Tokens.allCases), "\(change)")
        }
    }

    @Test("every planned push carries its push type's topic, a body within 4096 bytes and a future expiration", arguments: rows)
    func pushesAreWellFormed(change: Change, tokens: Tokens) throws {
        for delivery in DeliveryScenarios.plan(change, tokens).deliveries {
            #expect(delivery.topic == delivery.pushType.topic(bundleID: "cafe.crema.app"))
            #expect(delivery.body.json.count <= APNsBody.maxBytes)
            #expect(delivery.expiration > DeliveryScenarios.now)
            #expect(delivery.notBefore >= DeliveryScenarios.now)
            #expect([5, 10].contains(delivery.priority))
            #expect(!delivery.sentence.isEmpty)
            let aps = try #require((try JSONSerialization.jsonObject(with: delivery.body.json) as? [String: Any])?["aps"] as? [String: Any])
            switch delivery.pushType {
            case .liveactivity:
                #expect(aps["event"] as? String == delivery.liveActivityEvent?.rawValue)
                #expect((aps["timestamp"] as? NSNumber)?.int64Value == delivery.apnsTimestamp)
                #expect(aps["content-state"] is [String: Any])
                if delivery.liveActivityEvent == .end { #expect(aps["dismissal-date"] != nil) }
                if delivery.liveActivityEvent == .start {
                    #expect(aps["attributes-type"] as? String == "OrderActivityAttributes")
                    #expect(aps["input-push-token"] as? Int == 1)
                }
            case .alert:
                #expect(aps["alert"] is [String: Any])
                #expect(delivery.collapseID == DeliveryScenarios.transition(change).order.id.uuidString.lowercased())
            case .widgets:
                #expect(aps["content-changed"] as? Bool == true)
            }
        }
    }
}
