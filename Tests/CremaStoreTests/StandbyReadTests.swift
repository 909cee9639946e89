import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Synchronization
import Testing

/// `CREMA_DATABASE_READ_URL` on a real primary and its streaming standby: reads go to the standby only when it has
/// replayed what the primary had committed when the read began, so a read after a write always sees the write.
@Suite("Reads from a standby", .serialized)
struct StandbyReadTests {
    /// Where each read went, in order.
    final class Outcomes: Sendable {
        private let seen = Mutex<[StandbyReads.Outcome]>([])
        func record(_ outcome: StandbyReads.Outcome) { seen.withLock { $0.append(outcome) } }
        /// The outcomes since the last call.
        func taken() -> [StandbyReads.Outcome] { seen.withLock { all in defer { all = [] }; return all } }
    }

    @Test("A read after a write the standby has not replayed is served by the primary and sees the write; a caught-up standby serves it")
    func aReadNeverMissesAnAcknowledgedWrite() async throws {
        try await ReplicatedClusters.with { clusters in
            let primary = PostgresPool(.init(conninfo: clusters.primary.conninfo, maxConnections: 4))
            let standby = PostgresPool(.init(conninfo: clusters.standby.conninfo, maxConnections: 4))
            let outcomes = Outcomes()
            let reads = StandbyReads(primary: primary, standby: standby) { outcomes.record($0) }
            let service = OrderService(database: CremaDatabase(pool: primary, reads: reads), clock: .system)
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await primary.withConnection { try await migrator.migrate(on: $0) }
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let first = try StoreFixtures.orderID(
                try await service.place(StoreFixtures.placement(posRef: "A"), in: .default, role: .pos, request: StoreFixtures.request()))

            // Caught up: the standby serves the board, the customer's list and the stream's head.
            try await ReplicatedClusters.caughtUp(primary: primary, standby: standby)
            #expect(try await Self.queued(service) == [first])
            #expect(try await service.database.customers.orders(customerRef: "c-9", tenant: "default").map(\.order.id) == [first])
            let head = try await service.database.stream.streamHead(store: "market-st", in: .default)
            #expect(outcomes.taken() == [.standby, .standby, .standby])

            // The standby stops replaying: what is written now is acknowledged by the primary only.
            try await standby.withConnection { try await $0.simpleQuery("SELECT pg_wal_replay_pause()") }
            let second = try StoreFixtures.orderID(
                try await service.place(StoreFixtures.placement(posRef: "B"), in: .default, role: .pos, request: StoreFixtures.request()))
            // The standby alone does not have it: a read it served would miss the acknowledged order.
            let onStandby = try await standby.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n FROM orders WHERE order_id = \(second)").first?.decode("n", as: Int.self)
            }
            #expect(onStandby == 0)
            #expect(try await Self.queued(service) == [first, second])
            #expect(try await service.database.customers.orders(customerRef: "c-9", tenant: "default").map(\.order.id).sorted() == [first, second].sorted())
            #expect(try await service.database.stream.streamHead(store: "market-st", in: .default) > head)
            #expect(outcomes.taken() == [.primaryStandbyBehind, .primaryStandbyBehind, .primaryStandbyBehind])

            // Replaying again and caught up, the standby serves the same answer.
            try await standby.withConnection { try await $0.simpleQuery("SELECT pg_wal_replay_resume()") }
            try await ReplicatedClusters.caughtUp(primary: primary, standby: standby)
            #expect(try await Self.queued(service) == [first, second])
            #expect(outcomes.taken() == [.standby])

            // A standby that is gone leaves the reads on the primary, answered.
            try await clusters.standby.stop()
            #expect(try await Self.queued(service) == [first, second])
            #expect(outcomes.taken() == [.primaryStandbyFailed])
            await standby.close()
            await primary.close()
        }
    }

    @Test("Without a standby every read is the primary's and nothing is counted")
    func withoutAStandbyReadsStayOnThePrimary() async throws {
        try await TestDatabase.with { db in
            let outcomes = Outcomes()
            let reads = StandbyReads(primary: db.pool, standby: nil) { outcomes.record($0) }
            let service = OrderService(database: CremaDatabase(pool: db.pool, reads: reads), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let id = try StoreFixtures.orderID(
                try await service.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            #expect(try await Self.queued(service) == [id])
            #expect(outcomes.taken().isEmpty)
        }
    }

    static func queued(_ service: OrderService) async throws -> [UUID] {
        try await service.database.orders.board(store: "market-st", in: .default).columns[.queued, default: []].map(\.id)
    }
}
