import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import PropertyBased
import Testing

/// `GET /v1/orders/{id}/preview` asks the planner what `apply` asked it (issue #43, item 2): over random orders (every
/// event the state allows, small and large delays, Crema's own close), tokens registered before and between the events
/// or not at all (a Live Activity with frequent updates on or off, push-to-start, alert, widget), and time passing,
/// the service's preview taken at the instant of each change holds exactly the plan that change wrote: the same
/// pushes (target, priority, body, reason, times), the same skips and the same superseded rows.
@Suite(.serialized, .timeLimit(.minutes(5))) struct PreviewPlanPropertyTests {
    enum Step: Sendable, CustomStringConvertible {
        /// The `choice`-th event the order's state allows (a delay of `choice` × 4 min, so both sides of `largeDelay`).
        case event(choice: Int)
        /// A token of the kind registers (`kind` % 5: activity with frequent updates, activity without, push-to-start, alert, widget).
        case register(kind: Int)
        case tick(seconds: Int)

        var description: String {
            switch self {
            case .event(let choice): "event(\(choice))"
            case .register(let kind): "register(\(kind % 5))"
            case .tick(let seconds): "tick(\(seconds))"
            }
        }
    }

    static let step = zip(Gen.int(in: 0...99), Gen.int(in: 0...15)).map { kind, n -> Step in
        switch kind {
        case 0..<55: .event(choice: n)
        case 55..<80: .register(kind: n)
        default: .tick(seconds: 1 + n * 97)
        }
    }

    /// The tokens registered before the order's first change: none, some, or every kind.
    static let tokens = Gen.int(in: 0...31)

    /// One outbox row as the change wrote it, and as the preview's plan would write it.
    struct Row: Hashable, CustomStringConvertible {
        var kind: String?
        var target: Int64?
        var pushType: String?
        var priority: Int?
        var topic: String?
        var collapseID: String?
        var body: String?
        var expires: Date?
        var state: String
        var reason: String
        var sentence: String
        var runAt: Date?
        var event: String?
        var timestamp: Int64?

        var description: String { "\(state) \(kind ?? "-")#\(target ?? 0) \(pushType ?? "-") \(event ?? "") p\(priority ?? 0) \(reason): \(sentence)" }
    }

    static func rows(_ plan: DeliveryPlan) -> [Row] {
        plan.deliveries.map { d in
            Row(
                kind: d.target.kind.rawValue, target: d.target.id, pushType: d.pushType.rawValue, priority: d.priority, topic: d.topic,
                collapseID: d.collapseID, body: d.body.string, expires: d.expiration, state: "pending", reason: d.reason.rawValue,
                sentence: d.sentence, runAt: d.notBefore, event: d.liveActivityEvent?.rawValue, timestamp: d.apnsTimestamp)
        }
            + plan.skips.map { s in
                Row(
                    kind: s.target?.kind.rawValue, target: s.target?.id, pushType: s.pushType?.rawValue, priority: nil, topic: nil,
                    collapseID: nil, body: nil, expires: nil, state: "skipped", reason: s.reason.rawValue, sentence: s.sentence, runAt: nil,
                    event: nil, timestamp: nil)
            }
    }

    /// The rows the change that made `version` wrote, in the order it wrote them, and the rows it superseded.
    static func written(_ pool: PostgresPool, order: UUID, version: Int, at: Date) async throws -> (rows: [Row], superseded: Set<Int64>) {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT target_kind, target_id, push_type, priority::int AS priority, topic, collapse_id, body, expires_at, state,
                       reason_code, reason, run_at, la_event, apns_timestamp
                FROM delivery_outbox WHERE order_id = \(order) AND order_version = \(version) ORDER BY delivery_id
                """
            ).map { row in
                let state: String = try row.decode("state")
                return Row(
                    kind: try row.decode("target_kind", as: String?.self), target: try row.decode("target_id", as: Int64?.self),
                    pushType: try row.decode("push_type", as: String?.self), priority: try row.decode("priority", as: Int?.self),
                    topic: try row.decode("topic", as: String?.self), collapseID: try row.decode("collapse_id", as: String?.self),
                    body: try row.decode("body", as: String?.self), expires: try row.decode("expires_at", as: Date?.self), state: state,
                    reason: try row.decode("reason_code"), sentence: try row.decode("reason"),
                    runAt: state == "skipped" ? nil : try row.decode("run_at", as: Date.self), event: try row.decode("la_event", as: String?.self),
                    timestamp: try row.decode("apns_timestamp", as: Int64?.self))
            }
            let superseded = try await connection.query(
                "SELECT delivery_id FROM delivery_outbox WHERE order_id = \(order) AND state = 'superseded' AND finished_at = \(at)"
            ).map { try $0.decode("delivery_id", as: Int64.self) }
            return (rows, Set(superseded))
        }
    }

    /// The `choice`-th event `order`'s state allows (Crema's own close among them), with the role that sends it.
    static func event(_ choice: Int, for order: Order) -> (OrderEvent, Role)? {
        var events: [(OrderEvent, Role)] = order.allowedEvents.map { type in
            switch type {
            case .started: (.started(barista: "Sam"), .barista)
            case .delayed: (.delayed(eta: order.eta.addingTimeInterval(TimeInterval(1 + choice % 8) * 240), reason: "Oat milk"), .pos)
            case .ready: (.ready(pickupPoint: choice % 2 == 0 ? "counter" : nil), .barista)
            case .pickedUp: (.pickedUp, .pos)
            case .canceled: (.canceled(reason: "Customer left"), .pos)
            case .placed, .expired: (.pickedUp, .pos)  // never allowed after placement; expired is added below
            }
        }
        for reason in ExpiryReason.allCases where reason.expiredState == order.state { events.append((.expired(reason: reason), .system)) }
        return events.isEmpty ? nil : events[choice % events.count]
    }

    /// A token no other registration of the run uses (one database serves every case).
    static func token() -> String { (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "").lowercased() }

    @Test("the preview taken at the instant of a change holds the plan that change wrote, for every event, state and set of tokens")
    func previewIsThePlanWritten() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)))
            let service = OrderService(database: CremaDatabase(pool: db.pool, clock: clock.crema), clock: clock.crema)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            await propertyCheck(count: 60, input: Self.tokens, Self.step.array(of: 0...14)) { initial, steps in
                let customer = "c-\(UUID().uuidString.prefix(8).lowercased())"
                await clock.advance(1)
                var id: UUID?
                var registered = 0
                func register(_ kind: Int) async throws {
                    registered += 1
                    let token = Self.token()
                    switch kind % 5 {
                    case 0, 1:
                        _ = try await service.database.tokens.putActivityToken(
                            orderID: try #require(id), in: .default, token: token, environment: .production, bundleID: nil, frequentUpdates: kind % 5 == 0)
                    default:
                        let kinds: [PushTargetKind] = [.pushToStart, .alert, .widget]
                        _ = try await service.putCustomerToken(
                            customerRef: customer, tenant: "default", kind: kinds[kind % 5 - 2], token: token, environment: .production,
                            bundleID: nil, replaces: nil)
                    }
                }
                // The customer's tokens before the order, so its placement is planned for them; an activity's token only
                // after it (the app starts the activity once the order exists), so placement's plan is compared without one.
                for kind in 2..<5 where initial & (1 << kind) != 0 { try await register(kind) }
                let order = try await OrderServiceFixture.place(service, customer: customer, at: clock)
                id = order
                try await Self.expectPreviewIsWritten(service, db.pool, order: order, at: clock.now, context: "placed, \(registered) tokens")
                for kind in 0..<2 where initial & (1 << kind) != 0 { try await register(kind) }
                for step in steps {
                    switch step {
                    case .tick(let seconds):
                        await clock.advance(TimeInterval(seconds))
                    case .register(let kind):
                        try await register(kind)
                    case .event(let choice):
                        let current = try #require(try await service.order(id: order, in: .default)).order
                        guard let (event, role) = Self.event(choice, for: current) else { continue }
                        // Each change at an instant of its own: the rows it superseded are the order's with its time.
                        await clock.advance(1)
                        try await OrderServiceFixture.apply(service, event, to: order, as: role)
                        try await Self.expectPreviewIsWritten(
                            service, db.pool, order: order, at: clock.now, context: "\(event.type) after \(steps), \(registered) tokens")
                    }
                }
            }
        }
    }

    static func expectPreviewIsWritten(
        _ service: OrderService, _ pool: PostgresPool, order id: UUID, at: Date, context: String
    ) async throws {
        let preview = try #require(try await service.preview(orderID: id, in: .default))
        let written = try await Self.written(pool, order: id, version: preview.context.order.version, at: at)
        #expect(Self.rows(preview.plan) == written.rows, "\(context)")
        #expect(Set(preview.plan.superseded) == written.superseded, "\(context)")
        #expect(preview.context.now == at)
    }
}
