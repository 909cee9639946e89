import CremaCore
import Foundation
import Testing

/// The app's budget (issue #33, part 6): a Live Activity registered with `frequent_updates: false` gets priority 10
/// only for what must wake the customer, `ready` and `canceled` (docs/delivery.md, "Frequent updates off").
@Suite struct DeliveryPlannerFrequentUpdatesTests {
    typealias S = DeliveryScenarios
    static let la = "live_activity#1"
    static let alert = "alert#3"
    static let widget = "widget#4"

    /// The scenario's plan with the Live Activity token registered with `frequentUpdates`.
    static func plan(_ change: S.Change, _ tokens: S.Tokens, frequentUpdates: Bool) -> DeliveryPlan {
        var context = S.context(change, tokens: tokens.refs)
        context.targets = context.targets.map { target in
            var target = target
            if target.kind == .liveActivity { target.frequentUpdates = frequentUpdates }
            return target
        }
        return DeliveryPlanner.plan(context, policy: S.policy)
    }

    @Test("with frequent updates off a large delay goes at priority 5 with its alert inside and the log says why") func withFrequentUpdatesOffALargeDelayGoesAtPriority5WithItsAlertInsideAndTheLogSaysWhy() throws {
        let plan = Self.plan(.largeDelay, .everything, frequentUpdates: false)
        #expect(S.summary(plan) == [
            "\(Self.alert) skip alert_shown_in_activity",
            "\(Self.la) update p5 alert activity_update_frequent_updates_off",
            "\(Self.widget) p5 widget_relevance_changed",
        ])
        let update = try #require(plan.deliveries.first { $0.target == S.activity })
        #expect(update.sentence.contains("frequent updates off"))
        #expect(S.summary(Self.plan(.largeDelay, .everything, frequentUpdates: true)).contains("\(Self.la) update p10 alert activity_update_urgent"))
    }

    @Test("with frequent updates off ready and a cancellation still wake the customer at priority 10") func withFrequentUpdatesOffReadyAndACancellationStillWakeTheCustomerAtPriority10() {
        #expect(S.summary(Self.plan(.ready, .activityAndAlert, frequentUpdates: false)) == [
            "\(Self.alert) skip alert_shown_in_activity", "\(Self.la) update p10 alert activity_update_urgent",
        ])
        for change in [S.Change.canceledWhileQueued, .canceledWhenReady] {
            #expect(S.summary(Self.plan(change, .activityOnly, frequentUpdates: false)) == ["\(Self.la) end p10 alert activity_end"])
        }
    }

    @Test("with frequent updates off a routine update goes at priority 5 and its reason says frequent updates are off") func withFrequentUpdatesOffARoutineUpdateGoesAtPriority5AndItsReasonSaysFrequentUpdatesAreOff() throws {
        for change in [S.Change.started, .smallDelay] {
            let plan = Self.plan(change, .activityOnly, frequentUpdates: false)
            #expect(S.summary(plan) == ["\(Self.la) update p5 activity_update_frequent_updates_off"])
            #expect(try #require(plan.deliveries.first).sentence.contains("only ready and canceled go at priority 10"))
        }
        // An end is an end: the pickup's goes quietly either way, with its own reason.
        #expect(S.summary(Self.plan(.pickedUp, .activityOnly, frequentUpdates: false)) == ["\(Self.la) end p5 activity_end"])
    }

    @Test("turning frequent updates off changes the priority of nothing but a large delay", arguments: S.Change.allCases)
    func turningFrequentUpdatesOffChangesThePriorityOfNothingButALargeDelay(change: S.Change) {
        let on = Self.plan(change, .everything, frequentUpdates: true).deliveries.map(\.priority)
        let off = Self.plan(change, .everything, frequentUpdates: false).deliveries.map(\.priority)
        #expect(on.count == off.count)
        if change == .largeDelay {
            #expect(on != off)
            #expect(off.allSatisfy { $0 == 5 })
        } else {
            #expect(on == off)
        }
    }

    @Test("only ready and canceled are changes that wake a customer with frequent updates off") func onlyReadyAndCanceledAreChangesThatWakeACustomerWithFrequentUpdatesOff() {
        #expect(OrderEventType.allCases.filter(DeliveryPlanner.wakesCustomer) == [.ready, .canceled])
    }
}
