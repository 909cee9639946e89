import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// Migration 022: an event that keeps its order open rewrites the row in place (a HOT update, no index entry), and
/// only the event that ends it writes index entries (it leaves `orders_open` and joins retention's index).
@Suite struct OrderUpdateHOTTests {
    /// What an event's write (`OrderStatements.Appended`) sets on the order, run in a transaction that is rolled back
    /// so its own counters can be read exactly: (updated, HOT-updated).
    static func update(to state: OrderState, order: UUID, on connection: PostgresConnection) async throws -> (Int, Int) {
        // The backend's own counters (they hold what it has not yet reported, so the test reads them before and after).
        let counts: PostgresQuery = """
            SELECT pg_stat_get_xact_tuples_updated('orders'::regclass) AS updated,
                   pg_stat_get_xact_tuples_hot_updated('orders'::regclass) AS hot
            """
        try await connection.simpleQuery("BEGIN")
        let before = try await connection.query(counts)[0]
        _ = try await connection.query(
            """
            UPDATE orders SET state = \(state.rawValue), version = version + 1, eta = eta + interval '1 minute',
                   barista = 'Kai', pickup_point = 'counter', delay_reason = NULL, cancel_reason = NULL,
                   updated_at = updated_at + interval '1 minute', projection = projection, personal_data_removed_at = NULL
            WHERE tenant_id = 'default' AND store_id = 'market-st' AND order_id = \(order)
            """)
        let after = try await connection.query(counts)[0]
        try await connection.simpleQuery("ROLLBACK")
        return (
            try after.decode("updated", as: Int.self) - before.decode("updated", as: Int.self),
            try after.decode("hot", as: Int.self) - before.decode("hot", as: Int.self)
        )
    }

    @Test("an event that keeps the order open is a HOT update, and one that ends it is not")
    func anEventThatKeepsTheOrderOpenIsAHOTUpdateAndOneThatEndsItIsNot() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let order = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            try await db.pool.withConnection { connection in
                for state in OrderState.open {
                    let (updated, hot) = try await Self.update(to: state, order: order, on: connection)
                    #expect(updated == 1 && hot == 1, "queued → \(state): \(hot) of \(updated) HOT")
                }
                for state in OrderState.allCases where state.isTerminal {
                    let (updated, hot) = try await Self.update(to: state, order: order, on: connection)
                    #expect(updated == 1 && hot == 0, "queued → \(state): \(hot) of \(updated) HOT")
                }
            }
        }
    }
}
