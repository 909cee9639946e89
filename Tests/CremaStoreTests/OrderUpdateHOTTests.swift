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
    /// so its own counters can be read exactly.
    static func update(to state: OrderState, order: UUID, on connection: PostgresConnection) async throws -> TransactionUpdates {
        try await connection.simpleQuery("BEGIN")
        let before = try await TransactionUpdates.read("orders", tenant: "default", on: connection)
        // New times bound as values, as the event's write binds them (Citus refuses `eta + interval` of a column in
        // an UPDATE: the operator depends on the time zone).
        let now = Date()
        _ = try await connection.query(
            """
            UPDATE orders SET state = \(state.rawValue), version = version + 1, eta = \(now.addingTimeInterval(600)),
                   barista = 'Kai', pickup_point = 'counter', delay_reason = NULL, cancel_reason = NULL,
                   updated_at = \(now), projection = projection, personal_data_removed_at = NULL
            WHERE tenant_id = 'default' AND store_id = 'market-st' AND order_id = \(order)
            """)
        let after = try await TransactionUpdates.read("orders", tenant: "default", on: connection)
        try await connection.simpleQuery("ROLLBACK")
        return after - before
    }

    @Test("an event that keeps the order open is a HOT update, and one that ends it is not")
    func anEventThatKeepsTheOrderOpenIsAHOTUpdateAndOneThatEndsItIsNot() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let order = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            try await db.pool.withConnection { connection in
                for state in OrderState.open {
                    let counts = try await Self.update(to: state, order: order, on: connection)
                    #expect(counts == TransactionUpdates(updated: 1, hot: 1), "queued → \(state): \(counts)")
                }
                for state in OrderState.allCases where state.isTerminal {
                    let counts = try await Self.update(to: state, order: order, on: connection)
                    #expect(counts == TransactionUpdates(updated: 1, hot: 0), "queued → \(state): \(counts)")
                }
            }
        }
    }
}
