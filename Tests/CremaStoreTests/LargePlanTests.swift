import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// What a change costs as a customer's tokens grow (docs/limits.md): the same round trips up to the default limits,
/// and a plan past one statement's parameters written in several statements of one round trip, never refused.
@Suite struct LargePlanTests {
    /// `count` active tokens of each kind for customer c-9, written directly: registering them one by one would test
    /// the registration, not the plan.
    static func tokens(_ count: Int, in db: TestDatabase) async throws {
        for kind in ["alert", "widget", "push_to_start"] {
            _ = try await db.scalar(
                """
                WITH t AS (
                    INSERT INTO customer_tokens (tenant_id, customer_ref, kind, token, environment)
                    SELECT 'default', 'c-9', \(kind), md5(\(kind) || n) || md5(n::text), 'production' FROM generate_series(1, \(count)) n
                    RETURNING 1)
                SELECT count(*) FROM t
                """, as: Int.self)
        }
    }

    @Test("an order with 20 tokens per kind plans and commits in the same two round trips as one with a single token")
    func twentyTokensPerKindCostNoExtraRoundTrip() async throws {
        for count in [1, 20] {
            try await TestDatabase.with("twentyTokensPerKind\(count)") { db in
                let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
                let service = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
                _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
                try await Self.tokens(count, in: db)
                let placed = try await service.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
                let id = try StoreFixtures.orderID(placed)
                let before = try await pool.withConnection { $0.roundTrips }
                _ = try await service.apply(
                    .ready(pickupPoint: "counter"), to: id, in: .default, expectedVersion: nil, role: .barista,
                    request: StoreFixtures.request(scope: "barista"))
                #expect(try await pool.withConnection { $0.roundTrips } - before == 2, "with \(count) tokens per kind")
                let rows = try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE order_version = 2", as: Int.self)
                #expect(rows >= 3 * count, "every token has its decision written")
                await pool.close()
            }
        }
    }

    @Test("a plan larger than one statement's parameters is written whole, in the same round trip")
    func aPlanPastOneStatementIsSplitNotRefused() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let service = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            // 3,000 tokens: each row binds up to 14 parameters, so one statement could not carry them (65,535 at most).
            try await Self.tokens(1_000, in: db)
            let placed = try await service.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            let id = try StoreFixtures.orderID(placed)
            let before = try await pool.withConnection { $0.roundTrips }
            let ready = try await service.apply(
                .ready(pickupPoint: "counter"), to: id, in: .default, expectedVersion: nil, role: .barista,
                request: StoreFixtures.request(scope: "barista"))
            #expect(!ready.replayed)
            #expect(try await pool.withConnection { $0.roundTrips } - before == 2)
            let written = try await db.scalar(
                "SELECT count(DISTINCT (target_kind, target_id)) FROM delivery_outbox WHERE order_version = 2 AND target_kind <> 'live_activity'",
                as: Int.self)
            #expect(written == 3_000)
            #expect(try await db.scalar("SELECT version FROM orders", as: Int.self) == 2)
            await pool.close()
        }
    }
}
