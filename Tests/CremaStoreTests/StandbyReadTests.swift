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
            // Two views of the same servers: a patient one (the caught-up checks must not depend on a loaded machine's
            // replay keeping within 20 ms) and one with the default wait, for the paused standby.
            let patientOutcomes = Outcomes()
            let patient = OrderService(
                database: CremaDatabase(
                    pool: primary, reads: StandbyReads(primary: primary, standby: standby, replayWait: .seconds(30), observe: { patientOutcomes.record($0) }), clock: .system),
                clock: .system)
            let promptOutcomes = Outcomes()
            let prompt = OrderService(
                database: CremaDatabase(pool: primary, reads: StandbyReads(primary: primary, standby: standby, observe: { promptOutcomes.record($0) }), clock: .system),
                clock: .system)
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await primary.withConnection { try await migrator.migrate(on: $0) }
            _ = try await patient.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let first = try StoreFixtures.orderID(
                try await patient.place(StoreFixtures.placement(posRef: "A"), in: .default, role: .pos, request: StoreFixtures.request()))

            // Caught up: the standby serves the board, the store's order list, the customer's list and the stream's head.
            #expect(try await Self.queued(patient) == [first])
            #expect(try await patient.database.orders.orders(store: "market-st", in: .default, state: nil, limit: 10, cursor: nil).orders.map(\.id) == [first])
            #expect(try await patient.database.customers.orders(customerRef: "c-9", tenant: "default").map(\.order.id) == [first])
            let head = try await patient.database.stream.streamHead(store: "market-st", in: .default)
            #expect(patientOutcomes.taken() == [.standby, .standby, .standby, .standby])

            // The standby stops replaying: what is written now is acknowledged by the primary only.
            try await standby.withConnection { try await $0.simpleQuery("SELECT pg_wal_replay_pause()") }
            let second = try StoreFixtures.orderID(
                try await prompt.place(StoreFixtures.placement(posRef: "B"), in: .default, role: .pos, request: StoreFixtures.request()))
            // The standby alone does not have it: a read it served would miss the acknowledged order.
            let onStandby = try await standby.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n FROM orders WHERE order_id = \(second)").first?.decode("n", as: Int.self)
            }
            #expect(onStandby == 0)
            #expect(try await Self.queued(prompt) == [first, second])
            #expect(try await prompt.database.customers.orders(customerRef: "c-9", tenant: "default").map(\.order.id).sorted() == [first, second].sorted())
            #expect(try await prompt.database.stream.streamHead(store: "market-st", in: .default) > head)
            #expect(try await Self.queued(prompt) == [first, second])
            // Behind after its wait; the next read goes straight to the primary (backoff); tried again, behind; skipped.
            #expect(promptOutcomes.taken() == [.primaryStandbyBehind, .primaryBackoff, .primaryStandbyBehind, .primaryBackoff])

            // A transaction's snapshot is taken after the wait: a read that waited for the replay sees what it waited for.
            let third = try StoreFixtures.orderID(
                try await prompt.place(StoreFixtures.placement(posRef: "C"), in: .default, role: .pos, request: StoreFixtures.request()))
            let waitBegan = TestEvent()
            let waitingOutcomes = Outcomes()
            let waiting = CremaDatabase(
                pool: primary,
                reads: StandbyReads(primary: primary, standby: standby, replayWait: .seconds(30), observeWait: { waitBegan.signal() },
                    observe: { waitingOutcomes.record($0) }), clock: .system)
            async let waited = waiting.customers.order(customerRef: "c-9", tenant: "default", id: third)
            // The read has found the standby behind and is about to wait: only now does the replay go on.
            await waitBegan.wait()
            try await standby.withConnection { try await $0.simpleQuery("SELECT pg_wal_replay_resume()") }
            #expect(try await waited?.order.order.id == third)
            #expect(waitingOutcomes.taken() == [.standby])

            // A standby that is gone leaves the reads on the primary, answered.
            try await clusters.standby.stop()
            #expect(try await Self.queued(patient) == [first, second, third])
            #expect(patientOutcomes.taken() == [.primaryStandbyFailed])
            await standby.close()
            await primary.close()
        }
    }

    @Test("A standby left on a former primary's timeline serves no read, though its replay is past the new primary's position")
    func aStandbyOnAFormerTimelineServesNothing() async throws {
        try await ReplicatedClusters.with(extraStandbys: 1) { clusters in
            let oldPrimary = PostgresPool(.init(conninfo: clusters.primary.conninfo, maxConnections: 2))
            let stale = PostgresPool(.init(conninfo: clusters.extraStandbys[0].conninfo, maxConnections: 2))
            let writer = OrderService(database: CremaDatabase(pool: oldPrimary, clock: .system), clock: .system)
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await oldPrimary.withConnection { try await migrator.migrate(on: $0) }
            _ = try await writer.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let kept = try StoreFixtures.orderID(
                try await writer.place(StoreFixtures.placement(posRef: "A"), in: .default, role: .pos, request: StoreFixtures.request()))
            let promoted = PostgresPool(.init(conninfo: clusters.standby.conninfo, maxConnections: 2))
            try await ReplicatedClusters.caughtUp(primary: oldPrimary, standby: promoted)

            // The failover: the first standby becomes the primary (timeline 2) while the old one, cut off rather than dead,
            // goes on writing on timeline 1, streamed to the other standby: a segment switch takes that standby's replay
            // far past the new primary's position, and an order the new primary never had.
            try await clusters.standby.promote()
            try await oldPrimary.withConnection { connection in _ = try await connection.query("SELECT pg_switch_wal()::text") }
            let lost = try StoreFixtures.orderID(
                try await writer.place(StoreFixtures.placement(posRef: "B"), in: .default, role: .pos, request: StoreFixtures.request()))
            try await ReplicatedClusters.caughtUp(primary: oldPrimary, standby: stale)
            let staleReplay = try await stale.withConnection { connection in
                try await connection.query("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::int8 AS at").first?.decode("at", as: Int64.self)
            }
            let newInsert = try await promoted.withConnection { connection in
                try await connection.query("SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::int8 AS at").first?.decode("at", as: Int64.self)
            }
            // The position alone would let the stale standby serve: only the timeline tells.
            #expect(try #require(staleReplay) > (try #require(newInsert)))

            let outcomes = Outcomes()
            let reader = OrderService(
                database: CremaDatabase(
                    pool: promoted, reads: StandbyReads(primary: promoted, standby: stale, replayWait: .seconds(5), observe: { outcomes.record($0) }), clock: .system),
                clock: .system)
            #expect(try await Self.queued(reader) == [kept])
            #expect(outcomes.taken() == [.primaryStandbyOtherTimeline])

            // The old primary stops too: the stale standby receives nothing at all, and still serves nothing (after the
            // one read the backoff sends straight to the primary).
            try await clusters.primary.stop()
            #expect(try await Self.queued(reader) == [kept])
            #expect(try await Self.queued(reader) == [kept])
            #expect(outcomes.taken() == [.primaryBackoff, .primaryStandbyOtherTimeline])
            #expect(try await stale.withConnection { connection in
                try await connection.query("SELECT count(*)::int AS n FROM orders WHERE order_id = \(lost)").first?.decode("n", as: Int.self)
            } == 1)
            await stale.close()
            await promoted.close()
            await oldPrimary.close()
        }
    }

    @Test("Without a standby every read is the primary's, and a read URL that reaches a primary serves nothing")
    func withoutAStandbyReadsStayOnThePrimary() async throws {
        try await TestDatabase.with { db in
            let outcomes = Outcomes()
            let service = OrderService(
                database: CremaDatabase(pool: db.pool, reads: StandbyReads(primary: db.pool, standby: nil, observe: { outcomes.record($0) }), clock: .system), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            let id = try StoreFixtures.orderID(
                try await service.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            #expect(try await Self.queued(service) == [id])
            #expect(outcomes.taken().isEmpty)

            // A "standby" that is not in recovery (a promoted or former primary) may have diverged: never trusted.
            let notStandby = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let misdirected = OrderService(
                database: CremaDatabase(pool: db.pool, reads: StandbyReads(primary: db.pool, standby: notStandby, observe: { outcomes.record($0) }), clock: .system),
                clock: .system)
            #expect(try await Self.queued(misdirected) == [id])
            #expect(outcomes.taken() == [.primaryNotStandby])
            await notStandby.close()
        }
    }

    static func queued(_ service: OrderService) async throws -> [UUID] {
        try await service.database.orders.board(store: "market-st", in: .default).columns[.queued, default: []].map(\.id)
    }
}
