import CremaCore
import CremaPostgres
import CremaService
@testable import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// `order_events` is append-only, with one documented exception (migration 008, docs/data-lifecycle.md): inside a
/// transaction that set `crema.erasure`, an UPDATE may replace values of `data` with null, and nothing else. The
/// statements name their tenant and are sent as Crema's erasure and retention send theirs.
@Suite(.timeLimit(.minutes(2))) struct EventLogErasureExceptionTests {
    /// Runs `statement` in a transaction of its own, after what Crema's erasure and retention set first when `erasure`
    /// (`PersonalDataScrub.erasureSettings`: the setting, and what makes Citus pass it on to the worker whose shard's
    /// trigger reads it). Each statement on its own, pipelined, as Crema sends them, not one simple query of several:
    /// Citus passes a `SET LOCAL` on to the workers as the text of the query it came in, and the workers then ran the
    /// whole string, the UPDATE of the distributed table included, which they refuse ("cannot execute a distributed
    /// query from a query on a shard").
    static func transaction(_ db: TestDatabase, erasure: Bool, _ statement: String) async throws {
        try await db.pool.withTransaction { connection in
            _ = try await connection.pipeline((erasure ? PersonalDataScrub.erasureSettings : []) + [PostgresQuery(unsafeSQL: statement)])
        }
    }

    /// Nulls the name in the default tenant's events.
    static let blankName = #"UPDATE order_events SET data = data || '{"display_name": null}' WHERE tenant_id = 'default'"#

    static func placed(_ db: TestDatabase) async throws {
        let store = try await StoreFixtures.store(in: db)
        _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
    }

    @Test("With the erasure setting on, an UPDATE that only nulls personal values of data is allowed")
    func blankingIsAllowedDuringErasure() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            try await Self.transaction(
                db, erasure: true, #"UPDATE order_events SET data = data || '{"display_name": null, "customer_ref": null}' WHERE tenant_id = 'default'"#)
            #expect(try await db.scalar("SELECT data->>'display_name' IS NULL AND data ? 'display_name' FROM order_events", as: Bool.self))
        }
    }

    @Test("Even with the erasure setting on, rewriting a value, adding or removing a key, changing another column or deleting is refused",
          arguments: [
              #"UPDATE order_events SET data = data || '{"display_name": "Someone else"}' WHERE tenant_id = 'default'"#,
              #"UPDATE order_events SET data = data || '{"note": null}' WHERE tenant_id = 'default'"#,
              "UPDATE order_events SET data = data - 'display_name' WHERE tenant_id = 'default'",
              "UPDATE order_events SET event_type = 'ready' WHERE tenant_id = 'default'",
              "UPDATE order_events SET occurred_at = '2001-02-03T04:05:06Z' WHERE tenant_id = 'default'",
              "DELETE FROM order_events WHERE tenant_id = 'default'",
          ])
    func rewritingHistoryIsRefusedDuringErasure(_ statement: String) async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            let error = await #expect(throws: PostgresError.self) {
                try await Self.transaction(db, erasure: true, statement)
            }
            #expect(error?.sqlState == "23001")
        }
    }

    @Test("Without the erasure setting, even blanking personal values is refused")
    func blankingIsRefusedOutsideErasure() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            let error = await #expect(throws: PostgresError.self) {
                try await Self.transaction(db, erasure: false, Self.blankName)
            }
            #expect(error?.sqlState == "23001")
        }
    }

    @Test("The erasure setting is transaction-local: the next transaction on the same connection is append-only again")
    func theSettingDoesNotOutliveItsTransaction() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            try await db.pool.withConnection { connection in
                try await connection.inTransaction(isolation: .readCommitted) { _ = try await $0.pipeline(PersonalDataScrub.erasureSettings) }
                await #expect(throws: PostgresError.self) { try await connection.query(PostgresQuery(unsafeSQL: Self.blankName)) }
            }
        }
    }
}
