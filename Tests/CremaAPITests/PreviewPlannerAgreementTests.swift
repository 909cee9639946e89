import CremaAPI
import CremaAPNsProtocol
import CremaCore
import Foundation
import Testing

/// `GET /v1/orders/{id}/preview` writes what the delivery planner answers and nothing else: for every event and delay
/// size, and tokens of every kind or none, its pushes, skips and bodies are the planner's (issue #43, item 2).
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

    static func json(_ body: APNsBody) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: body.json) }

    static let kinds: [[PushTargetKind]] = [[], [.liveActivity], [.pushToStart, .alert], [.liveActivity, .pushToStart, .alert, .widget], [.alert, .widget]]

    @Test("the preview writes the planner's plan for the order's tokens, push for push and skip for skip, for every event and delay size")
    func previewWritesThePlan() throws {
        for change in try Self.changes() {
            for kinds in Self.kinds {
                let targets = kinds.enumerated().map { index, kind in
                    PushTarget(ref: PushTargetRef(kind: kind, id: Int64(index + 1)), environment: .production, registeredAt: Self.now, bundleID: "cafe.example")
                }
                let context = DeliveryContext(
                    order: change.order, previous: change.previous, event: change.event, storeName: Self.store.name, timeZone: .gmt,
                    now: Self.now, targets: targets, history: [])
                let plan = DeliveryPlanner.plan(context, policy: Self.policy)
                let preview = try OrderPreview(DeliveryPreview(context, policy: Self.policy, sampleBundleID: "cafe.example"))
                let label = "\(change.name), \(kinds)"
                #expect(preview.deliveries.map(\.priority) == plan.deliveries.map(\.priority), "\(label)")
                #expect(preview.deliveries.map(\.reasonCode) == plan.deliveries.map(\.reason.rawValue), "\(label)")
                #expect(preview.deliveries.map(\.reason) == plan.deliveries.map(\.sentence), "\(label)")
                #expect(preview.deliveries.map(\.body) == (try plan.deliveries.map { try Self.json($0.body) }), "\(label)")
                #expect(preview.skips.map(\.reasonCode) == plan.skips.map(\.reason.rawValue), "\(label)")
                #expect(preview.contentState == (try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(plan.projection))))
            }
        }
    }

    @Test("each body shown is what a token of its kind alone would receive, and a kind the planner sends nothing to shows none")
    func bodiesAreThePlanForOneTokenOfEachKind() throws {
        for change in try Self.changes() {
            let context = DeliveryContext(
                order: change.order, previous: change.previous, event: change.event, storeName: Self.store.name, timeZone: .gmt,
                now: Self.now, targets: [], history: [])
            let preview = try OrderPreview(DeliveryPreview(context, policy: Self.policy, sampleBundleID: "cafe.example"))
            var expected: [String: PlannedDelivery] = [:]
            for (kind, name) in [(PushTargetKind.liveActivity, "liveactivity_update"), (.pushToStart, "liveactivity_start"), (.alert, "alert"), (.widget, "widgets")] {
                var alone = context
                alone.targets = [PushTarget(ref: PushTargetRef(kind: kind, id: 0), environment: .production, registeredAt: Self.now, bundleID: "cafe.example")]
                for planned in DeliveryPlanner.plan(alone, policy: Self.policy).deliveries {
                    expected[planned.liveActivityEvent == .end ? "liveactivity_end" : name] = planned
                }
            }
            #expect(Set(preview.bodies.keys) == Set(expected.keys), "\(change.name)")
            for (name, planned) in expected {
                #expect(preview.bodies[name]?.body == (try Self.json(planned.body)), "\(change.name): \(name)")
                #expect(preview.bodies[name]?.priority == planned.priority, "\(change.name): \(name)")
                #expect(preview.bodies[name]?.reasonCode == planned.reason.rawValue, "\(change.name): \(name)")
            }
            // Without tokens the order's own plan is one skip that says so.
            #expect(preview.deliveries.isEmpty && preview.skips.map(\.reasonCode) == ["no_targets"], "\(change.name)")
        }
    }
}
