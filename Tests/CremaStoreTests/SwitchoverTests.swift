import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Synchronization
import Testing

/// A two-node switchover under a small load, in the suite: the primary stopped, its standby promoted, Crema writing
/// through libpq's multi-host conninfo. The full failover drill (pg_auto_failover, `kill -9`, pushes and webhooks) is
/// `bench/failover-drill.sh`; this is the part of it that fits CI's budget.
@Suite("A switchover to the standby")
struct SwitchoverTests {
    /// What the writers saw: each acknowledged order, and whether the switchover had finished when it was acknowledged.
    final class Acknowledged: Sendable {
        private let state = Mutex<(orders: [UUID], afterPromotion: Int, promoted: Bool)>(([], 0, false))
        func record(_ id: UUID) {
            state.withLock { state in
                state.orders.append(id)
                if state.promoted { state.afterPromotion += 1 }
            }
        }
        func promoted() { state.withLock { $0.promoted = true } }
        var orders: [UUID] { state.withLock { $0.orders } }
        var afterPromotion: Int { state.withLock { $0.afterPromotion } }
    }

    @Test("Every order acknowledged before, during and after a switchover is kept once, and writes resume on the same pool")
    func aSwitchoverLosesNothingAcknowledged() async throws {
        try await ReplicatedClusters.with { clusters in
            let pool = PostgresPool(.init(conninfo: clusters.multiHostConninfo(targetSessionAttrs: "read-write"), maxConnections: 4))
            let service = OrderService(database: CremaDatabase(pool: pool), clock: .system)
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await pool.withConnection { try await migrator.migrate(on: $0) }
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let acknowledged = Acknowledged()

            try await withThrowingTaskGroup(of: Void.self) { group in
                // Four point-of-sale writers, each retrying a refused order with its same Idempotency-Key (as a POS does
                // when an answer is lost), until each has had five orders acknowledged after the promotion.
                for writer in 0..<4 {
                    group.addTask {
                        var sequence = 0
                        var mine = 0
                        while mine < 5 {
                            sequence += 1
                            let key = "w\(writer)-\(sequence)"
                            var placed: CommandResponse?
                            for _ in 0..<3_000 where placed == nil {
                                do {
                                    placed = try await service.place(
                                        StoreFixtures.placement(posRef: key), in: .default, role: .pos, request: StoreFixtures.request(key))
                                } catch let error as StoreError {
                                    guard case .database(let failure) = error, failure.isUnavailable else { throw error }
                                    // Refused while no server takes writes: the pool reconnects on the next lease.
                                    try await Task.sleep(for: .milliseconds(10))
                                }
                            }
                            let response = try #require(placed)
                            acknowledged.record(try StoreFixtures.orderID(response))
                            if acknowledged.afterPromotion > 0 { mine += 1 }
                        }
                    }
                }
                // The switchover, once the writers are under way: a fast shutdown sends the standby every WAL record
                // first, so nothing the old primary acknowledged is missing from the new one.
                // Bounded: a writer that failed early surfaces at waitForAll, after this gives up waiting for it.
                for _ in 0..<6_000 where acknowledged.orders.count < 8 { try await Task.sleep(for: .milliseconds(10)) }
                try #require(acknowledged.orders.count >= 8, "the writers had 8 orders acknowledged before the switchover")
                try await clusters.primary.stop()
                try await clusters.standby.promote()
                acknowledged.promoted()
                try await group.waitForAll()
            }

            let orders = acknowledged.orders
            #expect(acknowledged.afterPromotion >= 20)
            #expect(Set(orders).count == orders.count)
            // Every acknowledged order is on the promoted standby, and nothing else is (a retry made no second order).
            let kept = try await pool.withConnection { connection in
                try await connection.query("SELECT order_id FROM orders").map { try $0.decode("order_id", as: UUID.self) }
            }
            #expect(Set(kept) == Set(orders))
            #expect(try await pool.withConnection { connection in
                try await connection.query("SELECT pg_is_in_recovery() AS recovery").first?.decode("recovery", as: Bool.self)
            } == false)
            await pool.close()
        }
    }
}
