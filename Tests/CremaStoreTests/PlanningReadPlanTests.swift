import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaService
import CremaTestSupport
import Foundation
import Testing

@testable import CremaStore

/// A connection keeps the generic plan it made for a statement, and Crema's connections live for days: the
/// planning reads must cost the order's own rows under a plan made while the outbox was small, not the table's.
@Suite struct PlanningReadPlanTests {
    @Test("the planning read, under a plan cached while the outbox was nearly empty, still touches only its own rows once the outbox has grown")
    func planningReadStaysBoundedAsTheOutboxGrows() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let placed = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            let order = try StoreFixtures.orderID(placed)
            let token = (0..<32).map { UInt8($0 * 5 & 0xff) }.hexEncoded
            let target = try await store.database.tokens.putActivityToken(
                orderID: order, in: .default, token: token, environment: .sandbox, bundleID: nil)
            let statement: PostgresQuery = """
                WITH o AS (SELECT tenant_id, store_id, order_id, customer_ref FROM orders WHERE tenant_id = \("default") AND order_id = \(order)),
                t AS (\(DeliveryPlanning.targets(tenant: "default", defaultBundleID: "cafe.crema.test")))
                SELECT \(DeliveryPlanning.selectColumns(tenant: "default", now: Date())) FROM o
                """
            let arguments = statement.binds.map { value in
                value.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL"
            }.joined(separator: ", ")

            let (history, blocks) = try await db.pool.withConnection { connection in
                // No autoanalyze between the two runs: it would discard the cached plan this test is about.
                try await connection.simpleQuery(
                    "ALTER TABLE delivery_outbox SET (autovacuum_enabled = off); SET plan_cache_mode = force_generic_plan")
                try await connection.simpleQuery("PREPARE planning_read AS " + statement.sql)
                // The plan is made now, on an outbox holding only the placement's one row.
                _ = try await connection.query(PostgresQuery(unsafeSQL: "EXECUTE planning_read(\(arguments))"))
                // Then the tenant's outbox grows by 20,000 rows of no target (the planner's skips), and the order's
                // target gets two.
                try await connection.simpleQuery(
                    """
                    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, state, reason_code, reason,
                                                 run_at, created_at, finished_at)
                    SELECT 'default', 'market-st', '\(order)', 1, 'placed', 'skipped', 'no_targets', 'test', now(), now(), now()
                    FROM generate_series(1, 20000);
                    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                                 push_type, state, reason_code, reason, run_at, created_at, finished_at)
                    SELECT 'default', 'market-st', '\(order)', 1, 'placed', 'live_activity', \(target.ref.id), 'liveactivity', 'sent',
                           'activity_update', 'test', now(), now(), now()
                    FROM generate_series(1, 2)
                    """)
                let history = try await connection.query(PostgresQuery(unsafeSQL: "EXECUTE planning_read(\(arguments))"))
                let explained = try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE planning_read(\(arguments))"))
                return (try DeliveryPlanning.history(from: try #require(history.first)), try Self.blocks(explained))
            }
            #expect(history.count == 2)
            #expect(history.allSatisfy { $0.target == target.ref })
            // The two rows of its target and the index pages above them; walking the tenant's outbox was thousands.
            #expect(blocks < 100, "the planning read touched \(blocks) buffers")
        }
    }

    /// Shared buffers hit or read by the whole statement (the top node counts its children's).
    static func blocks(_ rows: [PostgresRow]) throws -> Int {
        let text = try #require(rows.first).decode(at: 0, as: String.self)
        let document = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        let plan = try #require(document?.first?["Plan"] as? [String: Any])
        return (plan["Shared Hit Blocks"] as? Int ?? 0) + (plan["Shared Read Blocks"] as? Int ?? 0)
    }
}
