import CremaCore
import CremaPostgres
import CremaService
@testable import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// `order_events` is append-only, with one documented exception (migration 008, docs/data-lifecycle.md): inside a
/// transaction that set `crema.erasure`, an UPDATE may replace values of `data` with null, and nothing else.
@Suite(.timeLimit(.minutes(2))) struct EventLogErasureExceptionTests {
    /// What Crema's erasure and retention transactions set first (`PersonalDataScrub.erasureSettings`): the setting,
    /// and what makes Citus pass it on to the worker whose shard's trigger reads it.
    static let erasure = PersonalDataScrub.erasureSettings.map(\.sql)

    /// Runs `statements` in one transaction (`BEGIN` … `COMMIT`), as one simple query.
    static func transaction(_ db: TestDatabase, _ statements: [String]) async throws {
        try await db.pool.withConnection { try await $0.simpleQuery((["BEGIN"] + statements + ["COMMIT"]).joined(separator: "; ")) }
    }

    static func placed(_ db: TestDatabase) async throws {
        let store = try await StoreFixtures.store(in: db)
        _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
    }

    @Test("With the erasure setting on, an UPDATE that only nulls personal values of data is allowed")
    func blankingIsAllowedDuringErasure() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            try await Self.transaction(db, Self.erasure + [#"UPDATE order_events SET data = data || '{"display_name": null, "customer_ref": null}'"#])
            #expect(try await db.scalar("SELECT data->>'display_name' IS NULL AND data ? 'display_name' FROM order_events", as: Bool.self))
        }
    }

    @Test("Even with the erasure setting on, rewriting a value, adding or removing a key, changing another column or deleting is refused",
          arguments: [
              #"UPDATE order_events SET data = data || '{"display_name": "Someone else"}'"#,
              #"UPDATE order_events SET data = data || '{"note": null}'"#,
              "UPDATE order_events SET data = data - 'display_name'",
              "UPDATE order_events SET event_type = 'ready'",
              "UPDATE order_events SET occurred_at = '2001-02-03T04:05:06Z'",
              "DELETE FROM order_events",
          ])
    func rewritingHistoryIsRefusedDuringErasure(_ statement: String) async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            let error = await #expect(throws: PostgresError.self) {
                try await Self.transaction(db, Self.erasure + [statement])
            }
            #expect(error?.sqlState == "23001")
        }
    }

    @Test("Without the erasure setting, even blanking personal values is refused")
    func blankingIsRefusedOutsideErasure() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            let error = await #expect(throws: PostgresError.self) {
                try await Self.transaction(db, [#"UPDATE order_events SET data = data || '{"display_name": null}'"#])
            }
            #expect(error?.sqlState == "23001")
        }
    }

    @Test("The erasure setting is transaction-local: the next transaction on the same connection is append-only again")
    func theSettingDoesNotOutliveItsTransaction() async throws {
        try await TestDatabase.with { db in
            try await Self.placed(db)
            try await db.pool.withConnection { connection in
                try await connection.simpleQuery((["BEGIN"] + Self.erasure + ["COMMIT"]).joined(separator: "; "))
                await #expect(throws: PostgresError.self) {
                    try await connection.simpleQuery(#"UPDATE order_events SET data = data || '{"display_name": null}'"#)
                }
            }
        }
    }
}
