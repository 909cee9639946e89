import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// The order commands' statements are kept per shape (`OrderStatements`): on one connection each shape is prepared
/// once, whatever the values, and runs by name after.
@Suite(.timeLimit(.minutes(2))) struct OrderStatementTests {
    @Test("orders placed and moved on one connection prepare each statement of the commands once, whatever the values")
    func ordersPlacedAndMovedOnOneConnectionPrepareEachStatementOnce() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let service = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            for n in 1...3 {
                let placed = try await service.place(
                    StoreFixtures.placement(posRef: "T-\(n)"), in: .default, role: .pos, request: StoreFixtures.request())
                let id = try StoreFixtures.orderID(placed)
                for event in [OrderEvent.started(barista: "Sam \(n)"), .ready(pickupPoint: "counter \(n)")] {
                    _ = try await service.apply(
                        event, to: id, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request(scope: "barista"))
                }
            }
            let prepared = try await pool.withConnection { connection in
                try await connection.query("SELECT statement FROM pg_prepared_statements ORDER BY statement").map {
                    try $0.decode("statement", as: String.self)
                }
            }
            func count(_ prefix: String) -> Int { prepared.filter { $0.hasPrefix(prefix) }.count }
            #expect(count("INSERT INTO idempotency_keys") == 2, "the claim by the request's store and by the order's")
            #expect(count("WITH s AS (") == 1, "the placement's read")
            #expect(count("WITH o AS (") == 1, "the order's read")
            #expect(count("WITH inserted AS (") == 1, "the placement's write")
            #expect((1...2).contains(count("WITH event AS (")), "the event's write: one shape per number of skips planned")
            #expect(Set(prepared).count == prepared.count, "no text prepared twice")
            #expect(count("COMMIT") == 1)
            #expect(count("BEGIN ISOLATION LEVEL READ COMMITTED") == 1)
            await pool.close()
        }
    }
}
