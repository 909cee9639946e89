import CremaClock
import CremaCore
import CremaPostgres
import CremaService
@testable import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// Migration 023: each event takes its store's next stream position on the store's row and holds the row until it
/// commits, so a store's positions are dense and become visible in their own order, and the stream needs no rule about
/// which transactions are still running (the rule that did not hold on Citus).
@Suite(.timeLimit(.minutes(2))) struct StreamPositionTests {
    @Test("a store's events take its positions one after another, and another store's positions are its own")
    func aStoresEventsTakeItsPositionsOneAfterAnother() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.database.stores.put(id: "ferry", name: "Ferry", timezone: "UTC", tenant: "default")
            let orders = try await withThrowingTaskGroup(of: UUID.self) { group in
                for n in 0..<6 {
                    group.addTask {
                        try StoreFixtures.orderID(
                            try await store.place(
                                StoreFixtures.placement(store: n < 4 ? "market-st" : "ferry", posRef: "T-\(n)"), in: .default, role: .pos,
                                request: StoreFixtures.request()))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for order in orders {
                    group.addTask {
                        _ = try await store.apply(
                            .started(barista: "Kai"), to: order, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request())
                    }
                }
                try await group.waitForAll()
            }
            for (id, events) in [("market-st", 8), ("ferry", 4)] {
                let positions = try await db.pool.withConnection { connection in
                    try await connection.query(
                        "SELECT stream_seq FROM order_events WHERE tenant_id = 'default' AND store_id = \(id) ORDER BY stream_seq"
                    ).map { try $0.decode("stream_seq", as: Int64.self) }
                }
                #expect(positions == Array(1...Int64(events)), "\(id)")
                #expect(try await store.database.stream.streamHead(store: id, in: .default) == Int64(events))
            }
            let heads = try await store.database.stream.streamHeads([
                StoreKey(tenant: "default", store: "market-st"), StoreKey(tenant: "default", store: "gone"),
            ])
            #expect(heads == [StoreKey(tenant: "default", store: "market-st"): 8, StoreKey(tenant: "default", store: "gone"): 0])
        }
    }

    @Test("an event waits for the store's earlier position to commit, so the stream never passes a position that appears later")
    func anEventWaitsForTheStoresEarlierPositionToCommit() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let first = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(posRef: "T-1"), in: .default, role: .pos, request: StoreFixtures.request()))
            let second = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(posRef: "T-2"), in: .default, role: .pos, request: StoreFixtures.request()))
            let stream = store.database.stream
            // Another command of the store in flight: it took position 3 and has not committed.
            let started = try await db.pool.withTransaction { holder in
                let taken = try await holder.query(
                    """
                    UPDATE stores SET stream_position = stream_position + 1
                    WHERE tenant_id = 'default' AND store_id = 'market-st' RETURNING stream_position
                    """)
                #expect(try taken.first?.decode("stream_position", as: Int64.self) == 3)
                let started = Task {
                    try await store.apply(
                        .started(barista: "Kai"), to: first, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request())
                }
                try await db.untilWaiting(1)
                #expect(try await stream.streamHead(store: "market-st", in: .default) == 2)
                #expect(try await stream.streamChanges(store: "market-st", tenant: "default", after: 2).isEmpty)
                _ = try await holder.query(
                    """
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, actor_role, occurred_at, stream_seq)
                    VALUES ('default', 'market-st', \(second), 2, 'delayed', 'pos', now(), 3)
                    """)
                return started
            }
            _ = try await started.value
            let changes = try await stream.streamChanges(store: "market-st", tenant: "default", after: 2)
            #expect(changes.map(\.cursor) == [3, 4])
            #expect(changes.map(\.order.id) == [second, first])
        }
    }

    @Test("a rolled back command gives its position back")
    func aRolledBackCommandGivesItsPositionBack() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let order = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            // A version conflict: the order is read and locked and the position taken, then the command rolls back.
            await #expect(throws: StoreError.self) {
                try await store.apply(
                    .started(barista: "Kai"), to: order, in: .default, expectedVersion: 7, role: .barista, request: StoreFixtures.request())
            }
            #expect(try await store.database.stream.streamHead(store: "market-st", in: .default) == 1)
            _ = try await store.apply(
                .started(barista: "Kai"), to: order, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request())
            #expect(try await db.scalar("SELECT max(stream_seq) FROM order_events", as: Int64.self) == 2)
        }
    }

    @Test("positions go on from the numbers a store's events had before migration 023")
    func positionsGoOnFromTheNumbersBeforeMigration023() async throws {
        let db = try await TestDatabase.create(migrated: false)
        do {
            let all = try CremaMigrations.all()
            try await db.pool.withConnection { connection in
                _ = try await Migrator(migrations: all.numbered.filter { $0.version < 23 }).migrate(on: connection)
                // Two stores' events interleaved on the one identity the cursor used to be.
                try await connection.simpleQuery(
                    """
                    INSERT INTO stores (tenant_id, store_id, name, next_order_number) VALUES ('default', 'market-st', 'Market St', 2), ('default', 'ferry', 'Ferry', 2);
                    INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, display_name, locale, items, state, version, eta, placed_at, updated_at)
                    VALUES ('default', 'market-st', '00000000-0000-0000-0000-00000000000a', 1, 'T-1', 'Ana', 'en', '[]', 'queued', 2, now(), now(), now()),
                           ('default', 'ferry', '00000000-0000-0000-0000-00000000000b', 1, 'T-2', 'Bo', 'en', '[]', 'queued', 1, now(), now(), now());
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, actor_role, occurred_at)
                    VALUES ('default', 'market-st', '00000000-0000-0000-0000-00000000000a', 1, 'placed', 'pos', now());
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, actor_role, occurred_at)
                    VALUES ('default', 'ferry', '00000000-0000-0000-0000-00000000000b', 1, 'placed', 'pos', now());
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, actor_role, occurred_at)
                    VALUES ('default', 'market-st', '00000000-0000-0000-0000-00000000000a', 2, 'delayed', 'pos', now());
                    """)
                _ = try await Migrator(migrations: all).migrate(on: connection)
            }
            let stream = StreamRepository(pool: db.pool, clock: .system)
            #expect(try await stream.streamHead(store: "market-st", in: .default) == 3)
            #expect(try await stream.streamHead(store: "ferry", in: .default) == 2)
            let store = OrderService(database: CremaDatabase(pool: db.pool, clock: .system), clock: .system)
            _ = try await store.place(StoreFixtures.placement(store: "ferry"), in: .default, role: .pos, request: StoreFixtures.request())
            #expect(try await stream.streamChanges(store: "ferry", tenant: "default", after: 2).map(\.cursor) == [3])
        } catch {
            await db.drop()
            throw error
        }
        await db.drop()
    }
}
