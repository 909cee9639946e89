import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// The SQL of `DeliveryRepository.claim` and `record` (the rule of `DeliveryOrderingSQL`) against
/// `DeliveryOrdering`, the pure rule the property tests check: random rows of one activity in every state, claimed by the
/// real statements.
@Suite struct DeliveryOrderingStoreTests {
    static let states: [DeliveryState] = [.pending, .pending, .inflight, .sent, .dead, .superseded, .skipped]

    /// An order with a registered Live Activity token, and the token's target id.
    func activityOrder(_ store: OrderService, posRef: String) async throws -> (UUID, Int64) {
        let placed = try await store.place(StoreFixtures.placement(posRef: posRef), in: .default, role: .pos, request: StoreFixtures.request())
        let id = try StoreFixtures.orderID(placed)
        let token = (0..<32).map { UInt8(($0 + posRef.count) & 0xff) }.hexEncoded + posRef.unicodeScalars.map { UInt8($0.value & 0xff) }.hexEncoded
        let registered = try await store.database.tokens.putActivityToken(orderID: id, in: .default, token: token, environment: .sandbox, bundleID: nil)
        return (id, registered.ref.id)
    }

    func insert(_ db: TestDatabase, order: UUID, target: Int64, event: LiveActivityEvent, state: DeliveryState) async throws -> Int64 {
        try await db.scalar(
            """
            INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id, push_type,
                                         priority, topic, body, expires_at, state, reason_code, reason, run_at, la_event, locked_until)
            VALUES ('default', 'market-st', \(order), 1, 'started', 'live_activity', \(target), 'liveactivity', 5, 't', '{}',
                    now() + interval '1 hour', \(state.rawValue), 'activity_update', 'test', now() - interval '1 second', \(event.rawValue),
                    CASE WHEN \(state.rawValue) = 'inflight' THEN now() + interval '1 hour' END)
            RETURNING delivery_id
            """, as: Int64.self)
    }

    func states(_ db: TestDatabase, order: UUID) async throws -> [Int64: (String, String)] {
        try await db.pool.withConnection { c in
            var result: [Int64: (String, String)] = [:]
            for row in try await c.query("SELECT delivery_id, state, reason_code FROM delivery_outbox WHERE order_id = \(order) AND push_type = 'liveactivity'") {
                result[try row.decode("delivery_id")] = (try row.decode("state"), try row.decode("reason_code"))
            }
            return result
        }
    }

    @Test("no ordering function is left in the database: the rule runs inline, where Citus can route it with its row")
    func theRuleIsInlineNotAFunction() async throws {
        let file = try #require(try CremaMigrations.all().repeatable.first { $0.name == "delivery_ordering" })
        try await TestDatabase.with { db in
            let functions = try await db.scalar(
                "SELECT count(*) FROM pg_proc WHERE proname IN ('delivery_staleness', 'delivery_sequence_busy')", as: Int.self)
            #expect(functions == 0)
            #expect(try await db.scalar("SELECT checksum FROM schema_repeatables WHERE name = 'delivery_ordering'", as: String.self) == file.checksum)
        }
    }

    @Test("the claim withdraws, waits and claims exactly as DeliveryOrdering decides, for random rows of one activity")
    func claimAgreesWithThePureRule() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            var random = SeededGenerator(seed: 11)
            let deliveries = DeliveryRepository(pool: db.pool)
            // Enough trials that every shape of a short sequence comes up (an older row in flight behind a pending one among them).
            for trial in 0..<120 {
                let (order, target) = try await activityOrder(store, posRef: "T-\(trial)")
                // Placed before the token was registered: only the planner's skip, which is in no sequence.
                var rows: [DeliveryRecord] = []
                for (id, value) in try await states(db, order: order) where value.0 != "skipped" {
                    rows.append(DeliveryRecord(
                        id: id, target: PushTargetRef(kind: .liveActivity, id: target), orderID: order, pushType: .liveactivity,
                        liveActivityEvent: .update, priority: 5, state: DeliveryState(rawValue: value.0)!, plannedAt: Date()))
                }
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let event: LiveActivityEvent = Bool.random(using: &random) ? .update : .end
                    let state = Self.states.randomElement(using: &random)!
                    let id = try await insert(db, order: order, target: target, event: event, state: state)
                    rows.append(DeliveryRecord(
                        id: id, target: PushTargetRef(kind: .liveActivity, id: target), orderID: order, pushType: .liveactivity,
                        liveActivityEvent: event, priority: 5, state: state, plannedAt: Date()))
                }
                // Expected, as the model does it: withdraw stale pending rows, then decide on what is left.
                let facts = DeliveryOrdering.OrderFacts(finished: false, activityRegistered: true)
                var expected = rows
                var codes: [Int64: String] = [:]
                for index in expected.indices where expected[index].state == .pending {
                    if let reason = DeliveryOrdering.staleness(of: expected[index], among: rows, order: facts) {
                        expected[index].state = .superseded
                        codes[expected[index].id] = reason.rawValue
                    }
                }
                let snapshot = expected
                for index in expected.indices where expected[index].state == .pending {
                    if DeliveryOrdering.decide(snapshot[index], among: snapshot, order: facts) == .send { expected[index].state = .inflight }
                }

                _ = try await deliveries.claim(limit: 1_000, lease: .seconds(60), apps: nil, now: Date())
                let actual = try await states(db, order: order)
                for row in expected {
                    #expect(actual[row.id]?.0 == row.state.rawValue, "trial \(trial), row \(row.id): \(rows.map { ($0.id, $0.liveActivityEvent, $0.state) })")
                    if let code = codes[row.id] { #expect(actual[row.id]?.1 == code) }
                }
                try await db.pool.withConnection { c in _ = try await c.query("DELETE FROM delivery_outbox WHERE order_id = \(order)") }
            }
        }
    }

    @Test("a row that fails while a newer end was planned is withdrawn instead of retried")
    func recordRechecksAFailedRow() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let (order, target) = try await activityOrder(store, posRef: "T-x")
            let deliveries = DeliveryRepository(pool: db.pool)
            _ = try await insert(db, order: order, target: target, event: .update, state: .pending)
            let update = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).first)
            let end = try await insert(db, order: order, target: target, event: .end, state: .pending)
            // The end waits for the update in flight.
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).isEmpty)
            try await deliveries.record([DeliveryResult(delivery: update, outcome: .retry(at: Date(), status: 503, reason: "ServiceUnavailable"))], now: Date())
            let after = try await states(db, order: order)
            #expect(after[update.id]?.0 == "superseded")
            #expect(after[update.id]?.1 == "superseded_by_end")
            let next = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date())
            #expect(next.map(\.id) == [end])
        }
    }

    @Test("a start retrying when its order is canceled is withdrawn when its attempt comes back")
    func recordWithdrawsAStartOfAFinishedOrder() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.database.tokens.putCustomerToken(
                customerRef: "c-9", tenant: "default", kind: .pushToStart, token: String(repeating: "cd", count: 40), environment: .production, bundleID: nil, replaces: nil, limit: 20)
            let placed = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            let order = try StoreFixtures.orderID(placed)
            let deliveries = DeliveryRepository(pool: db.pool)
            let start = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).first)
            _ = try await store.apply(
                .canceled(reason: "left"), to: order, in: .default, expectedVersion: nil, role: .pos, request: StoreFixtures.request(scope: "pos"))
            try await deliveries.record([DeliveryResult(delivery: start, outcome: .retry(at: Date(), status: 503, reason: "ServiceUnavailable"))], now: Date())
            let after = try await states(db, order: order)
            #expect(after[start.id]?.0 == "superseded")
            #expect(after[start.id]?.1 == "start_order_finished")
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).isEmpty)
        }
    }
}
