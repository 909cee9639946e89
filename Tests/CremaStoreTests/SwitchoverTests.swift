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
        /// The writers are under way: eight orders acknowledged.
        let underWay = TestEvent()
        /// The standby has been promoted: a writer refused before it waits for it.
        let promotion = TestEvent()

        func record(_ id: UUID) {
            let count = state.withLock { state in
                state.orders.append(id)
                if state.promoted { state.afterPromotion += 1 }
                return state.orders.count
            }
            if count >= 8 { underWay.signal() }
        }
        func promoted() {
            state.withLock { $0.promoted = true }
            promotion.signal()
        }
        var orders: [UUID] { state.withLock { $0.orders } }
        var afterPromotion: Int { state.withLock { $0.afterPromotion } }
    }

    @Test("Every order acknowledged before, during and after a switchover is kept once, and writes resume on the same pool")
    func aSwitchoverLosesNothingAcknowledged() async throws {
        try await ReplicatedClusters.with { clusters in
            let pool = PostgresPool(.init(conninfo: clusters.multiHostConninfo(targetSessionAttrs: "read-write"), maxConnections: 4))
            let service = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await pool.withConnection { try await migrator.migrate(on: $0) }
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let acknowledged = Acknowledged()

            try await withThrowingTaskGroup(of: Void.self) { group in
                // Four point-of-sale writers, each retrying a refused order with its same Idempotency-Key (as a POS does
                // when an answer is lost), until each has had five orders acknowledged after the promotion.
                for writer in 0..<4 {
                    group.addTask {
                        do {
                            try await Self.write(as: writer, through: service, recording: acknowledged)
                        } catch {
                            // The switchover below waits for the writers to be under way: never for a writer that failed.
                            acknowledged.underWay.signal()
                            throw error
                        }
                    }
                }
                // The switchover, once the writers are under way: a fast shutdown sends the standby every WAL record
                // first, so nothing the old primary acknowledged is missing from the new one.
                // A writer refused meanwhile waits for the promotion; if the switchover fails, it is told to go on (and
                // then fails within its bounded retries) rather than wait for ever.
                defer { acknowledged.promotion.signal() }
                await acknowledged.underWay.wait()
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

    /// One point-of-sale writer: places orders, retrying a refused one with its same Idempotency-Key (as a POS does when
    /// an answer is lost), until it has had five acknowledged after the promotion.
    static func write(as writer: Int, through service: OrderService, recording acknowledged: Acknowledged) async throws {
        var sequence = 0
        var mine = 0
        while mine < 5 {
            sequence += 1
            let key = "w\(writer)-\(sequence)"
            var placed: CommandResponse?
            for _ in 0..<100 where placed == nil {
                do {
                    placed = try await service.place(
                        StoreFixtures.placement(posRef: key), in: .default, role: .pos, request: StoreFixtures.request(key))
                } catch {
                    guard case .database(let failure) = error, failure.isUnavailable else { throw error }
                    // Refused while no server takes writes: once the standby is promoted, the pool's next lease
                    // reconnects to it.
                    await acknowledged.promotion.wait()
                }
            }
            let response = try #require(placed)
            acknowledged.record(try StoreFixtures.orderID(response))
            if acknowledged.afterPromotion > 0 { mine += 1 }
        }
    }
}
