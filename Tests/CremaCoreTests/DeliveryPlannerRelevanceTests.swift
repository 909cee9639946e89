import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// Relevance for the watch (issue #33, part 5): when an event moves an open order's `RelevanceInterval`, the customer's
/// widget tokens get a `content-changed` push saying so, and the watch asks `GET /v1/me/relevance` again.
@Suite struct DeliveryPlannerRelevanceTests {
    typealias S = DeliveryScenarios
    static let widget = PushTargetRef(kind: .widget, id: 4)

    /// One event on `previous` at `time`, planned for a customer with only a widget token.
    static func plan(_ event: OrderEvent, on previous: Order, at time: Date) -> DeliveryPlan {
        let order = try! OrderStateMachine.apply(event, to: previous, expectedVersion: nil, at: time)
        let context = DeliveryContext(
            order: order, previous: previous, event: event.type, storeName: "Market St", timeZone: TimeZone(identifier: "UTC")!,
            now: time, targets: [PushTarget(ref: widget, environment: .production, registeredAt: S.now.addingTimeInterval(-3600), bundleID: "cafe.crema.app")],
            history: [])
        return DeliveryPlanner.plan(context, policy: S.policy)
    }

    static var preparing: Order { S.transition(.started).order }

    @Test("a delay that moves the pickup window plans a widget push whose reason says the relevance changed") func aDelayThatMovesThePickupWindowPlansAWidgetPushWhoseReasonSaysTheRelevanceChanged() throws {
        let plan = Self.plan(.delayed(eta: Self.preparing.eta.addingTimeInterval(600), reason: "machine"), on: Self.preparing, at: S.now)
        let push = try #require(plan.deliveries.first)
        #expect(plan.deliveries.count == 1)
        #expect(push.target == Self.widget)
        #expect(push.pushType == .widgets)
        #expect(push.reason == .widgetRelevanceChanged)
        #expect(push.sentence.contains("pickup window now ends 10 min later"))
    }

    @Test("a delay to an earlier ETA moves the window too") func aDelayToAnEarlierETAMovesTheWindowToo() throws {
        let plan = Self.plan(.delayed(eta: Self.preparing.eta.addingTimeInterval(-120), reason: "quick"), on: Self.preparing, at: S.now)
        #expect(try #require(plan.deliveries.first).reason == .widgetRelevanceChanged)
        #expect(try #require(plan.deliveries.first).sentence.contains("2 min earlier"))
    }

    @Test("an event that does not move the interval plans no extra widget push") func anEventThatDoesNotMoveTheIntervalPlansNoExtraWidgetPush() {
        let sameETA = Self.plan(.delayed(eta: Self.preparing.eta, reason: "still on time"), on: Self.preparing, at: S.now)
        #expect(sameETA.deliveries.isEmpty)
        #expect(sameETA.skips.map(\.reason) == [.widgetUnchanged])
        let started = Self.plan(.started(barista: "Sam"), on: S.transition(.placed).order, at: S.now)
        #expect(started.deliveries.isEmpty)
        #expect(started.skips.map(\.reason) == [.widgetUnchanged])
    }

    @Test("ready after the ETA moves the window's end and the reload says the relevance changed") func readyAfterTheETAMovesTheWindowsEndAndTheReloadSaysTheRelevanceChanged() throws {
        let late = Self.plan(.ready(pickupPoint: "counter"), on: Self.preparing, at: Self.preparing.eta.addingTimeInterval(300))
        #expect(late.deliveries.map(\.reason) == [.widgetRelevanceChanged])
        // Ready before the ETA leaves the window as it was: the reload is for what the widget shows.
        let early = Self.plan(.ready(pickupPoint: "counter"), on: Self.preparing, at: S.now)
        #expect(early.deliveries.map(\.reason) == [.widgetChanged])
    }

    @Test("a relevance push within the widget interval is deferred like any other reload") func aRelevancePushWithinTheWidgetIntervalIsDeferredLikeAnyOtherReload() throws {
        var context = S.context(.largeDelay, tokens: [Self.widget])
        context.history = [S.record(10, Self.widget, .widgets, state: .sent, minutesAgo: 2)]
        let push = try #require(DeliveryPlanner.plan(context, policy: S.policy).deliveries.first)
        #expect(push.reason == .widgetDeferred)
        #expect(push.sentence.contains("pickup window now ends"))
        #expect(push.notBefore == S.now.addingTimeInterval(3 * 60))
    }
}
