import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import Foundation
import Testing

/// Orders that end by themselves (`expired`, by `system`) and orders without their personal data: the pure rules the
/// sweep, retention and erasure run on (docs/data-lifecycle.md).
@Suite struct OrderLifecycleTests {
    static let limits = ExpiryLimits(ready: 2 * 3600, queued: 4 * 3600)

    static func order(_ state: OrderState, placedAt: Date = Fixtures.now, updatedAt: Date = Fixtures.now) -> Order {
        var order = Fixtures.order(in: state)
        order.placedAt = placedAt
        order.updatedAt = updatedAt
        return order
    }

    @Test("A ready order is due as not_collected exactly when the store's ready limit has passed since it became ready")
    func readyOrderExpiresAtItsLimit() {
        let readyAt = Fixtures.now.addingTimeInterval(600)
        let order = Self.order(.ready, updatedAt: readyAt)
        #expect(OrderExpiry.due(order, limits: Self.limits, now: readyAt.addingTimeInterval(2 * 3600 - 1)) == nil)
        #expect(OrderExpiry.due(order, limits: Self.limits, now: readyAt.addingTimeInterval(2 * 3600)) == .notCollected)
    }

    @Test("A queued order is due as never_started counted from placement, so a delay does not restart the count")
    func queuedOrderExpiresFromPlacement() {
        let order = Self.order(.queued, updatedAt: Fixtures.now.addingTimeInterval(3 * 3600))
        #expect(OrderExpiry.due(order, limits: Self.limits, now: Fixtures.now.addingTimeInterval(4 * 3600 - 1)) == nil)
        #expect(OrderExpiry.due(order, limits: Self.limits, now: Fixtures.now.addingTimeInterval(4 * 3600)) == .neverStarted)
    }

    @Test("An order being made or already finished never expires", arguments: [OrderState.preparing, .pickedUp, .canceled])
    func otherStatesNeverExpire(_ state: OrderState) {
        #expect(OrderExpiry.due(Self.order(state), limits: Self.limits, now: Fixtures.now.addingTimeInterval(365 * 86_400)) == nil)
    }

    @Test("The standard limits are 2 hours ready and 4 hours queued, and store minutes convert both ways")
    func standardLimits() {
        #expect(ExpiryLimits.standard == ExpiryLimits(readyMinutes: 120, queuedMinutes: 240))
        #expect(ExpiryLimits.standard.readyMinutes == 120)
        #expect(ExpiryLimits.standard.queuedMinutes == 240)
    }

    @Test("Each expiry reason names the one state it ends")
    func reasonsNameTheirState() {
        #expect(ExpiryReason.notCollected.expiredState == .ready)
        #expect(ExpiryReason.neverStarted.expiredState == .queued)
        #expect(ExpiryReason.allCases.map(\.rawValue) == ["not_collected", "never_started"])
    }

    @Test("Expiring ends the order as canceled without a free-text reason")
    func expiringEndsAsCanceled() throws {
        let order = Self.order(.ready)
        let next = try OrderStateMachine.apply(.expired(reason: .notCollected), to: order, expectedVersion: order.version, at: Fixtures.later)
        #expect(next.state == .canceled)
        #expect(next.cancelReason == nil)
        #expect(next.version == order.version + 1)
    }

    @Test("An expiry whose reason no longer fits the order's state is refused as an invalid transition")
    func mismatchedReasonIsRefused() {
        let order = Self.order(.ready)
        #expect(throws: OrderError.invalidTransition(from: .ready, event: .expired, allowed: order.allowedEvents)) {
            try OrderStateMachine.apply(.expired(reason: .neverStarted), to: order, expectedVersion: nil, at: Fixtures.later)
        }
    }

    @Test("Only the system may expire an order, and no client is ever offered the event")
    func onlyTheSystemExpires() {
        #expect(OrderEventType.expired.permittedRoles == [.system])
        #expect(OrderEventType.expired.isSystemOnly)
        #expect(OrderEventType.allCases.filter(\.isSystemOnly) == [.expired])
        #expect(!Self.order(.ready).allowedEvents.contains(.expired))
        #expect(!Role.keyRoles.contains(.system))
    }

    @Test("An expired order's Live Activity ends quietly at priority 5 and no alert interrupts the customer")
    func plannerEndsTheActivityQuietly() throws {
        let before = Self.order(.ready)
        let after = try OrderStateMachine.apply(.expired(reason: .notCollected), to: before, expectedVersion: nil, at: Fixtures.later)
        let targets = [PushTargetRef(kind: .liveActivity, id: 1), PushTargetRef(kind: .alert, id: 3), PushTargetRef(kind: .widget, id: 4)]
        let context = DeliveryContext(
            order: after, previous: before, event: .expired, storeName: "Market St", timeZone: .gmt, now: Fixtures.later,
            targets: targets.map { PushTarget(ref: $0, environment: .production, registeredAt: Fixtures.now, bundleID: "cafe.crema.app") },
            history: [])
        let plan = DeliveryPlanner.plan(context, policy: DeliveryPolicy())
        let activity = try #require(plan.deliveries.first { $0.pushType == .liveactivity })
        #expect(activity.liveActivityEvent == .end)
        #expect(activity.priority == 5)
        #expect(activity.reason == .activityEnd)
        #expect(!plan.deliveries.contains { $0.pushType == .alert })
        #expect(plan.deliveries.contains { $0.pushType == .widgets })
        #expect(InterruptionLevel.forEvent(.expired) == .passive)
    }

    @Test("An expiry alert reads in every language without the customer's name", arguments: ["en", "es", "ja"])
    func expiryAlertInEveryLanguage(_ locale: String) {
        let alert = OrderProjector.alert(
            for: .expired, order: Self.order(.canceled), storeName: "Market St", timeZone: .gmt, now: Fixtures.later, locale: locale)
        #expect(!alert.title.isEmpty)
        #expect(alert.body.contains("42"))
        #expect(!alert.title.contains("Ana") && !alert.body.contains("Ana"))
    }

    @Test("Removing personal data clears the ref, the name and free-text reasons, and keeps counts and timings")
    func withoutPersonalDataKeepsReportingFields() {
        var order = Self.order(.canceled, updatedAt: Fixtures.later)
        order.delayReason = "milk ran out"
        order.cancelReason = "Ana left"
        let scrubbed = order.withoutPersonalData()
        #expect(scrubbed.customerRef == nil)
        #expect(scrubbed.displayName.isEmpty)
        #expect(scrubbed.delayReason == nil && scrubbed.cancelReason == nil)
        #expect(scrubbed.number == order.number && scrubbed.items == order.items && scrubbed.state == order.state)
        #expect(scrubbed.version == order.version && scrubbed.placedAt == order.placedAt && scrubbed.updatedAt == order.updatedAt)
    }

    @Test("A projection without a name falls back to the wording without one, never \"Enjoy, !\"", arguments: ["en", "es", "ja"])
    func projectionWithoutNameUsesNamelessWording(_ locale: String) {
        for state in [OrderState.ready, .pickedUp] {
            let order = Self.order(state).withoutPersonalData()
            let content = OrderProjector.contentState(order: order, storeName: "Market St", timeZone: .gmt, now: Fixtures.now, locale: locale)
            let title = content.lockScreen.title
            #expect(!title.hasPrefix(",") && !title.hasPrefix("、") && !title.hasPrefix("様"), "\(state) \(locale): \(title)")
            #expect(!title.contains(", !") && !title.contains(" !"), "\(state) \(locale): \(title)")
            let alert = OrderProjector.alert(for: .ready, order: order, storeName: "Market St", timeZone: .gmt, now: Fixtures.now, locale: locale)
            #expect(!alert.title.hasPrefix(",") && !alert.title.hasPrefix("様"), "\(locale): \(alert.title)")
        }
    }
}
