import CremaClock
import CremaCore
import CremaPostgres
@testable import CremaServer
import CremaService
import CremaSettings
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Logging
import Synchronization
import Testing

/// The stream hub's tick (docs/limits.md): one read for every open stream, waking only those behind their store, and
/// closing the streams of a key that was revoked. The tick is run by hand; nothing waits for time.
@Suite struct StreamHubTests {
    @Test("a tick reads every store's head in one statement and wakes only the streams behind it")
    func aTickWakesOnlyStreamsBehind() async throws {
        try await TestDatabase.with { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let service = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            _ = try await service.database.stores.put(id: "pier-9", name: "Pier 9", timezone: "UTC", tenant: "default")
            _ = try await OrderServiceFixture.place(service, at: TestClock(Date()))
            // The head as streams see it. A transaction still running anywhere in the cluster (another suite's) holds a
            // new event back until it ends, as it should: the test waits for that other work, which has no event to
            // wait on (bounded, like the pg_locks polls elsewhere), never for time.
            var head = try await service.database.stream.streamHead(store: "market-st", in: .default)
            for _ in 0..<6_000 where head == 0 {
                try await Task.sleep(for: .milliseconds(20))
                head = try await service.database.stream.streamHead(store: "market-st", in: .default)
            }
            #expect(head > 0)
            let hub = StreamHub(changes: nil, stream: service.database.stream, clock: service.clock, logger: Logger(label: "test"))
            var upToDate = [Int]()
            for _ in 0..<50 {
                upToDate.append(try #require(hub.subscribe(tenant: "default", store: "market-st", holder: "configured:dashboard-0", limit: 100, after: head)).id)
            }
            let behind = try #require(hub.subscribe(tenant: "default", store: "market-st", holder: "configured:dashboard-0", limit: 100, after: 0))
            _ = hub.subscribe(tenant: "default", store: "pier-9", holder: "configured:dashboard-0", limit: 100, after: 0)

            let before = try await pool.withConnection { $0.roundTrips }
            #expect(await hub.tick() == StreamHub.Tick(woken: 1, closed: 0))
            // One statement for 52 streams of two stores (no generated key among them: nothing to check).
            #expect(try await pool.withConnection { $0.roundTrips } - before == 1)
            hub.advance(behind.id, to: head)
            #expect(await hub.tick() == StreamHub.Tick(woken: 0, closed: 0))
            await pool.close()
        }
    }

    @Test("the streams of a key revoked while they are open end at the next tick; others stay open")
    func aRevokedKeysStreamsEnd() async throws {
        try await StreamHarness.run(readsHeads: true, tickEvery: .seconds(3600)) { h in
            try await h.api.createStore()
            let key = try await TenantAPITests.issue(h.api, tenant: "default", role: "dashboard")
            let id = String(key.dropFirst("crema_".count).prefix(16))
            let revokedStream = try await h.open(as: nil, key: key)
            let otherStream = try await h.open(as: .dashboard)
            #expect(await h.hub.tick().closed == 0)
            let revoked = try await h.api.send(
                .delete, "/v1/admin/tenants/default/api-keys/\(id)", rawKey: TenantAPITests.bearer(APIHarness.adminKey))
            #expect(revoked.status == .noContent)
            #expect(await h.hub.tick().closed == 1)
            await revokedStream.ended()
            #expect(h.hub.streams(heldBy: "key:\(id)") == 0)
            let dashboard = try #require(APIHarness.apiKeys.principal(for: Substring(APIHarness.keys[.dashboard]!))?.holder)
            #expect(h.hub.streams(heldBy: dashboard) == 1)
            otherStream.close()
        }
    }

    @Test("streams of one store at one cursor woken by one change share one read and one encoding; the next change reads again")
    func onePageReadPerChange() async throws {
        let hub = StreamHub(changes: nil, clock: .system, logger: Logger(label: "test"))
        let store = StoreKey(tenant: "default", store: "market-st")
        for _ in 0..<3 { _ = hub.subscribe(tenant: "default", store: "market-st", holder: "configured:dashboard-0", limit: 100, after: 7) }
        let reads = ReadCounter()
        let read: @Sendable () async throws -> StreamPage = {
            reads.add()
            return StreamPage(events: "id: 8\nevent: order\ndata: {}\n\n", last: 8, count: 1)
        }
        hub.wake([store])
        let pages = try await withThrowingTaskGroup(of: StreamPage.self) { group in
            for _ in 0..<3 { group.addTask { try await hub.page(store, after: 7, read: read) } }
            return try await group.reduce(into: [StreamPage]()) { $0.append($1) }
        }
        #expect(pages.allSatisfy { $0.last == 8 })
        #expect(reads.count == 1)
        // Another cursor is another read; a new change makes the same cursor read again.
        _ = try await hub.page(store, after: 8, read: read)
        #expect(reads.count == 2)
        hub.wake([store])
        _ = try await hub.page(store, after: 8, read: read)
        #expect(reads.count == 3)
    }
}

/// Counts the reads a test's stand-in for the database was asked for.
final class ReadCounter: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
