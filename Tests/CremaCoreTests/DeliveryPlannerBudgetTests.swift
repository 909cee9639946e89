import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// How history changes a plan: Apple's budgets, supersession, `end` winning, rising timestamps, pending starts,
/// and widget coalescing.
@Suite struct DeliveryPlannerBudgetTests {
    typealias S = DeliveryScenarios
    let la = "live_activity#1"
    let alert = "alert#3"
    let widget = "widget#4"

    // MARK: - High-priority budget

    @Test("an urgent change with the activity's priority-10 budget spent goes at priority 5 and alerts separately")
    func budgetSpentFallsBackToASeparateAlert() {
        let history = [S.record(10, S.activity, .liveactivity, .update, priority: 10), S.record(11, S.activity, .liveactivity, .update, priority: 10)]
        #expect(S.summary(S.plan(.ready, .activityAndAlert, history: history)) == [
            "\(alert) p10 alert_budget_fallback", "\(la) update p5 activity_update_budget_spent",
        ])
    }

    @Test("with the budget spent and no alert token, the priority-5 update keeps its alert")
    func budgetSpentWithoutAlertTokenKeepsTheAlert() {
        let history = [S.record(10, S.activity, .liveactivity, .update, priority: 10), S.record(11, S.activity, .liveactivity, .update, priority: 10)]
        #expect(S.summary(S.plan(.ready, .activityOnly, history: history)) == ["\(la) update p5 alert activity_update_budget_spent"])
    }

    @Test("a canceled order with the budget spent still ends its activity, at priority 5, with a separate alert")
    func budgetSpentEndStillEnds() {
        let history = [S.record(10, S.activity, .liveactivity, .update, priority: 10), S.record(11, S.activity, .liveactivity, .update, priority: 10)]
        #expect(S.summary(S.plan(.canceledWhenReady, .activityAndAlert, history: history)) == [
            "\(alert) p10 alert_budget_fallback", "\(la) end p5 activity_end",
        ])
    }

    @Test("priority-10 pushes older than an hour no longer count against the budget")
    func budgetIsAnHourRolling() {
        let history = [
            S.record(10, S.activity, .liveactivity, .update, priority: 10, minutesAgo: 61),
            S.record(11, S.activity, .liveactivity, .update, priority: 10, minutesAgo: 59),
        ]
        #expect(S.summary(S.plan(.ready, .activityAndAlert, history: history)).contains("\(la) update p10 alert activity_update_urgent"))
    }

    @Test("superseded, skipped and dead pushes do not count against the budget", arguments: [DeliveryState.superseded, .skipped, .dead])
    func withdrawnPushesDoNotCount(state: DeliveryState) {
        let history = [
            S.record(10, S.activity, .liveactivity, .update, priority: 10, state: state),
            S.record(11, S.activity, .liveactivity, .update, priority: 10, state: state),
        ]
        #expect(S.summary(S.plan(.ready, .activityOnly, history: history)) == ["\(la) update p10 alert activity_update_urgent"])
    }

    @Test("pending and in-flight priority-10 pushes count against the budget", arguments: [DeliveryState.pending, .inflight])
    func unsentPushesCount(state: DeliveryState) {
        let history = [
            S.record(10, S.activity, .liveactivity, .update, priority: 10, state: state),
            S.record(11, S.activity, .liveactivity, .update, priority: 10, state: .sent),
        ]
        #expect(S.summary(S.plan(.ready, .activityOnly, history: history)) == ["\(la) update p5 alert activity_update_budget_spent"])
    }

    @Test("another activity's priority-10 pushes do not spend this one's budget")
    func budgetIsPerActivity() {
        let other = PushTargetRef(kind: .liveActivity, id: 99)
        let history = [S.record(10, other, .liveactivity, .update, priority: 10), S.record(11, other, .liveactivity, .update, priority: 10)]
        #expect(S.summary(S.plan(.ready, .activityOnly, history: history)) == ["\(la) update p10 alert activity_update_urgent"])
    }

    // MARK: - Supersession and end

    @Test("a newer update supersedes the activity's pending updates but not one already in flight")
    func newerUpdateSupersedesPendingOnes() {
        let history = [
            S.record(10, S.activity, .liveactivity, .update, state: .pending),
            S.record(11, S.activity, .liveactivity, .update, state: .inflight),
            S.record(12, S.activity, .liveactivity, .update, state: .sent),
            S.record(13, S.alert, .alert, state: .pending),
        ]
        #expect(S.plan(.started, .activityAndAlert, history: history).superseded == [10])
    }

    @Test("an end supersedes pending updates")
    func endSupersedesPendingUpdates() {
        let history = [S.record(10, S.activity, .liveactivity, .update, state: .pending)]
        let plan = S.plan(.pickedUp, .activityOnly, history: history)
        #expect(plan.superseded == [10])
        #expect(S.summary(plan) == ["\(la) end p5 activity_end"])
    }

    @Test("once an activity has its end, nothing more is planned for it", arguments: [DeliveryState.pending, .inflight, .sent])
    func endAlwaysWins(state: DeliveryState) {
        let history = [S.record(10, S.activity, .liveactivity, .end, state: state)]
        let plan = S.plan(.canceledWhenReady, .activityOnly, history: history)
        // A cancellation is urgent, but an ended activity cannot carry it and there is no alert token: both said.
        #expect(S.summary(plan) == ["\(la) skip activity_already_ended", "order skip no_alert_target"])
        #expect(plan.superseded.isEmpty)
    }

    @Test("a dead end does not stop a later end from being planned")
    func deadEndIsRetried() {
        let history = [S.record(10, S.activity, .liveactivity, .end, state: .dead)]
        #expect(S.summary(S.plan(.pickedUp, .activityOnly, history: history)) == ["\(la) end p5 activity_end"])
    }

    // MARK: - Timestamps

    @Test("the aps timestamp rises past the activity's last one even within the same second")
    func timestampIsMonotonic() throws {
        let nowSeconds = Int64(S.now.timeIntervalSince1970)
        let history = [S.record(10, S.activity, .liveactivity, .update, timestamp: nowSeconds + 5)]
        let delivery = try #require(S.plan(.started, .activityOnly, history: history).deliveries.first)
        #expect(delivery.apnsTimestamp == nowSeconds + 6)
        let aps = try #require((try JSONSerialization.jsonObject(with: delivery.body.json) as? [String: Any])?["aps"] as? [String: Any])
        #expect((aps["timestamp"] as? NSNumber)?.int64Value == nowSeconds + 6)
    }

    @Test("with only older timestamps the aps timestamp is the commit time")
    func timestampIsTheClockWhenAhead() throws {
        let nowSeconds = Int64(S.now.timeIntervalSince1970)
        let history = [S.record(10, S.activity, .liveactivity, .update, timestamp: nowSeconds - 60)]
        #expect(try #require(S.plan(.started, .activityOnly, history: history).deliveries.first).apnsTimestamp == nowSeconds)
    }

    // MARK: - Push-to-start

    @Test("after a start went out, an urgent change alerts instead of starting again")
    func startedActivityWithoutTokenAlerts() {
        let history = [S.record(10, S.pushToStart, .liveactivity, .start, priority: 10)]
        #expect(S.summary(S.plan(.ready, .pushToStartAndAlert, history: history)) == [
            "\(alert) p10 alert_activity_pending", "push_to_start#2 skip activity_start_pending",
        ])
    }

    @Test("after a start went out, a routine change waits for the activity's token")
    func startedActivityRoutineChangeWaits() {
        let history = [S.record(10, S.pushToStart, .liveactivity, .start, priority: 10)]
        #expect(S.summary(S.plan(.started, .pushToStartAndAlert, history: history)) == [
            "\(alert) skip alert_not_needed", "push_to_start#2 skip activity_start_pending",
        ])
    }

    @Test("an unsent start is replaced by a start showing the newer state")
    func pendingStartIsSuperseded() {
        let history = [S.record(10, S.pushToStart, .liveactivity, .start, priority: 10, state: .pending)]
        let plan = S.plan(.started, .pushToStartOnly, history: history)
        #expect(plan.superseded == [10])
        #expect(S.summary(plan) == ["push_to_start#2 start p10 alert activity_start"])
    }

    @Test("a start sent for another order does not stop this order's start")
    func startsArePerOrder() {
        let history = [S.record(10, S.pushToStart, .liveactivity, .start, priority: 10, order: UUID())]
        #expect(S.summary(S.plan(.placed, .pushToStartOnly, history: history)) == ["push_to_start#2 start p10 alert activity_start"])
    }

    // MARK: - Widgets

    @Test("a change while a widget push waits coalesces into it")
    func widgetBurstCoalesces() {
        let history = [S.record(10, S.widget, .widgets, state: .pending, minutesAgo: 1)]
        #expect(S.summary(S.plan(.ready, .widgetOnly, history: history)) == ["order skip no_alert_target", "\(widget) skip widget_coalesced"])
    }

    @Test("a widget pushed recently gets one trailing push at the end of the minimum interval")
    func widgetIsDeferred() throws {
        let history = [S.record(10, S.widget, .widgets, state: .sent, minutesAgo: 2)]
        let plan = S.plan(.pickedUp, .widgetOnly, history: history)
        #expect(S.summary(plan) == ["\(widget) p5 widget_deferred"])
        let delivery = try #require(plan.deliveries.first)
        #expect(delivery.notBefore == S.now.addingTimeInterval(3 * 60))
        #expect(delivery.expiration > delivery.notBefore)
    }

    @Test("a widget pushed longer ago than the interval is pushed at once")
    func widgetAfterIntervalGoesNow() throws {
        let history = [S.record(10, S.widget, .widgets, state: .sent, minutesAgo: 6)]
        let delivery = try #require(S.plan(.pickedUp, .widgetOnly, history: history).deliveries.first)
        #expect(delivery.reason == .widgetChanged)
        #expect(delivery.notBefore == S.now)
    }

    @Test("a widget token at its daily cap is skipped until pushes age out of the last 24 hours")
    func widgetDailyCap() {
        let full = Self.widgetHistory(firstMinutesAgo: 10)
        #expect(S.summary(S.plan(.pickedUp, .widgetOnly, history: full)) == ["\(widget) skip widget_daily_cap"])
        let aged = Self.widgetHistory(firstMinutesAgo: 300)  // the oldest is now 1,450 min ago
        #expect(S.summary(S.plan(.pickedUp, .widgetOnly, history: aged)) == ["\(widget) p5 widget_changed"])
    }

    /// 24 sent widget pushes, 50 minutes apart, the newest `firstMinutesAgo` ago (the oldest 1,160 min later).
    static func widgetHistory(firstMinutesAgo: Double) -> [DeliveryRecord] {
        var records: [DeliveryRecord] = []
        for index in 0..<24 {
            let minutes: Double = firstMinutesAgo + Double(index) * 50
            records.append(S.record(Int64(100 + index), S.widget, .widgets, minutesAgo: minutes))
        }
        return records
    }

    // MARK: - Invariants over every change, token set and history

    static let histories: [[DeliveryRecord]] = [
        [],
        [S.record(10, S.activity, .liveactivity, .update, priority: 10), S.record(11, S.activity, .liveactivity, .update, priority: 10)],
        [S.record(12, S.activity, .liveactivity, .update, state: .pending)],
        [S.record(13, S.activity, .liveactivity, .end)],
        [S.record(14, S.pushToStart, .liveactivity, .start, priority: 10)],
        [S.record(15, S.widget, .widgets, state: .pending)],
        [S.record(16, S.widget, .widgets, minutesAgo: 1)],
    ]

    static let everything: [(DeliveryScenarios.Change, DeliveryScenarios.Tokens, Int)] =
        DeliveryScenarios.Change.allCases.flatMap { c in DeliveryScenarios.Tokens.allCases.flatMap { t in histories.indices.map { (c, t, $0) } } }

    @Test("no device hears one change twice: an alert push never accompanies an activity push that carries the alert",
          arguments: everything)
    func oneAlertPerChange(change: DeliveryScenarios.Change, tokens: DeliveryScenarios.Tokens, history: Int) {
        let plan = S.plan(change, tokens, history: Self.histories[history])
        let activityAlerts = plan.deliveries.filter { $0.pushType == .liveactivity && $0.liveActivityEvent != .start && S.hasAlert($0.body) }
        let alerts = plan.deliveries.filter { $0.pushType == .alert }
        #expect(activityAlerts.isEmpty || alerts.isEmpty)
    }

    @Test("routine changes never use priority 10 except to start an activity", arguments: everything)
    func routineIsQuiet(change: DeliveryScenarios.Change, tokens: DeliveryScenarios.Tokens, history: Int) {
        let context = S.context(change, tokens: tokens.refs, history: Self.histories[history])
        guard !DeliveryPlanner.isUrgent(context, policy: S.policy) else { return }
        let plan = DeliveryPlanner.plan(context, policy: S.policy)
        #expect(plan.deliveries.allSatisfy { $0.priority == 5 || $0.liveActivityEvent == .start })
        #expect(plan.deliveries.allSatisfy { $0.pushType != .alert })
    }

    @Test("every activity, alert and widget token gets exactly one decision", arguments: everything)
    func oneDecisionPerTarget(change: DeliveryScenarios.Change, tokens: DeliveryScenarios.Tokens, history: Int) {
        let plan = S.plan(change, tokens, history: Self.histories[history])
        for target in tokens.refs where target.kind != .pushToStart {
            let decisions = plan.deliveries.filter { $0.target == target }.count + plan.skips.filter { $0.target == target }.count
            #expect(decisions == 1, "\(target)")
        }
    }

    @Test("the same context always gives the same plan", arguments: everything)
    func planIsDeterministic(change: DeliveryScenarios.Change, tokens: DeliveryScenarios.Tokens, history: Int) {
        #expect(S.plan(change, tokens, history: Self.histories[history]) == S.plan(change, tokens, history: Self.histories[history]))
    }
}
