import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// `GET /v1/orders/{id}/preview` and the delivery planner read one rule for whether a change alerts: for every event
/// and delay size, the preview's Live Activity body carries an alert exactly when the planned push does.
@Suite struct PreviewPlannerAgreementTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    static let store = Store(id: "market-st", name: "Market St", timezone: "UTC", createdAt: now, updatedAt: now)
    static let policy = DeliveryPolicy()

    /// Each change the planner can see, applied by the real state machine.
    static func changes() throws -> [(name: String, previous: Order, order: Order, event: OrderEventType)] {
        let placement = OrderPlacement(
            storeID: "market-st", posRef: "T-1", customerRef: "c-1", displayName: "Ana", locale: "en",
            items: [OrderItem(name: "Flat white")], eta: now.addingTimeInterval(300))
        let placed = try OrderStateMachine.place(placement, id: UUID(), number: 7, at: now)
        func apply(_ event: OrderEvent, to order: Order) throws -> Order { try OrderStateMachine.apply(event, to: order, expectedVersion: nil, at: now) }
        let preparing = try apply(.started(barista: "Sam"), to: placed)
        let ready = try apply(.ready(pickupPoint: nil), to: preparing)
        return [
            ("started", placed, preparing, .started),
            ("small delay", preparing, try apply(.delayed(eta: preparing.eta.addingTimeInterval(policy.largeDelay - 60), reason: nil), to: preparing), .delayed),
            ("large delay", preparing, try apply(.delayed(eta: preparing.eta.addingTimeInterval(policy.largeDelay), reason: nil), to: preparing), .delayed),
            ("ready", preparing, ready, .ready),
            ("picked up", ready, try apply(.pickedUp, to: ready), .pickedUp),
            ("canceled", preparing, try apply(.canceled(reason: "left"), to: preparing), .canceled),
            ("expired", ready, try apply(.expired(reason: .notCollected), to: ready), .expired),
        ]
    }

    static func hasAlert(_ body: JSONValue?) -> Bool { body?["aps"]?["alert"] != nil }

    @Test("the preview shows an alert exactly when the planned Live Activity push carries one, for every event and delay size")
    func previewAndPlannerAgree() throws {
        for change in try Self.changes() {
            let target = PushTarget(ref: PushTargetRef(kind: .liveActivity, id: 1), environment: .production, registeredAt: Self.now, bundleID: "cafe.example")
            let plan = DeliveryPlanner.plan(
                DeliveryContext(
                    order: change.order, previous: change.previous, event: change.event, storeName: Self.store.name, timeZone: .gmt,
                    now: Self.now, targets: [target], history: []),
                policy: Self.policy)
            let planned = try #require(plan.deliveries.first { $0.pushType == .liveactivity }, "\(change.name)")
            let plannedBody = try JSONDecoder().decode(JSONValue.self, from: Data(planned.body.string.utf8))
            let preview = try OrderPreview(
                order: change.order, lastEvent: change.event, etaBefore: change.previous.eta, store: Self.store, now: Self.now, policy: Self.policy)
            let shown = preview.bodies["liveactivity_update"] ?? preview.bodies["liveactivity_end"]
            #expect(Self.hasAlert(shown?.body) == Self.hasAlert(plannedBody), "\(change.name)")
        }
    }

    @Test("the ETA before the last event is the latest one an earlier event set")
    func etaBeforeTheLastEvent() {
        let events = [
            RecordedEvent(version: 1, type: .placed, role: .pos, occurredAt: Self.now, data: ["eta": "2026-11-26T10:00:00Z"]),
            RecordedEvent(version: 2, type: .delayed, role: .pos, occurredAt: Self.now, data: ["eta": "2026-11-26T10:05:00Z"]),
            RecordedEvent(version: 3, type: .started, role: .barista, occurredAt: Self.now, data: ["barista": "Sam"]),
            RecordedEvent(version: 4, type: .delayed, role: .pos, occurredAt: Self.now, data: ["eta": "2026-11-26T10:30:00Z"]),
        ]
        #expect(OrderPreview.etaBefore(lastOf: events) == WireCoding.parseRFC3339("2026-11-26T10:05:00Z"))
        #expect(OrderPreview.etaBefore(lastOf: Array(events.prefix(1))) == nil)
    }
}
