import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct OrderStoreTests {
    @Test("an order walked through its life has one event per version") func anOrderWalkedThroughItsLifeHasOneEventPerVersion() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let placed = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            let id = try StoreFixtures.orderID(placed)
            let events: [(OrderEvent, Role)] = [(.started(barista: "Sam"), .barista), (.ready(pickupPoint: "counter"), .barista), (.pickedUp, .pos)]
            for (event, role) in events {
                _ = try await store.apply(
                    event, to: id, in: .default, expectedVersion: nil, role: role,
                    request: StoreFixtures.request(path: "events", scope: role.rawValue))
            }
            let detail = try #require(try await store.database.orders.order(id: id, in: .default))
            #expect(detail.order.state == .pickedUp)
            #expect(detail.order.version == 4)
            #expect(detail.order.pickupPoint == "counter")
            #expect(detail.events.map(\.type) == [.placed, .started, .ready, .pickedUp])
            #expect(detail.events.map(\.version) == [1, 2, 3, 4])
            #expect(detail.events[1].data == ["barista": "Sam"])
            #expect(detail.events[3].role == .pos)
        }
    }

    @Test("an event's data keeps the ETA the client sent to the millisecond") func anEventsDataKeepsTheETATheClientSentToTheMillisecond() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            // Text the format style reads back a millisecond earlier (…18.005 is 18.00499… as a double): it used to be
            // written into the event's data truncated, while the order and the API said .005.
            let parse = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            let soon = (Date().timeIntervalSince1970 + 600).rounded(.down)
            func text(_ seconds: Double, _ millis: String) -> String {
                Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle()).dropLast() + ".\(millis)Z"
            }
            let (placedETA, delayedETA) = (text(soon, "005"), text(soon + 600, "790"))
            var placement = StoreFixtures.placement()
            placement.eta = try parse.parse(placedETA)
            let placed = try await store.place(placement, in: .default, role: .pos, request: StoreFixtures.request())
            let id = try StoreFixtures.orderID(placed)
            _ = try await store.apply(
                .delayed(eta: try parse.parse(delayedETA), reason: "milk"), to: id, in: .default, expectedVersion: nil, role: .pos,
                request: StoreFixtures.request(path: "events"))
            let detail = try #require(try await store.database.orders.order(id: id, in: .default))
            #expect(detail.events.map { $0.data["eta"] } == [.string(placedETA), .string(delayedETA)])
        }
    }

    @Test("orders are numbered per store") func ordersAreNumberedPerStore() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.database.stores.put(id: "pier-39", name: "Pier 39", timezone: "UTC", tenant: "default")
            var numbers: [Int] = []
            for storeID in ["market-st", "market-st", "pier-39"] {
                let response = try await store.place(
                    StoreFixtures.placement(store: storeID), in: .default, role: .pos, request: StoreFixtures.request())
                numbers.append(try #require(try await store.database.orders.order(id: StoreFixtures.orderID(response), in: .default)).order.number)
            }
            #expect(numbers == [1, 2, 1])
        }
    }

    @Test("a replayed placement returns the first answer and writes nothing") func aReplayedPlacementReturnsTheFirstAnswerAndWritesNothing() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let request = StoreFixtures.request("key-1", body: #"{"a":1}"#)
            let first = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: request)
            let second = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: request)
            #expect(!first.replayed)
            #expect(second.replayed)
            #expect(second.body == first.body)
            #expect(second.status == first.status)
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 1)
        }
    }

    @Test("a replayed event is not checked against the new state and appends no row") func aReplayedEventIsNotCheckedAgainstTheNewStateAndAppendsNoRow() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            let request = StoreFixtures.request("start-1", path: "events", scope: "barista")
            let first = try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 1, role: .barista, request: request)
            // Applied again, `started` would be an invalid transition and a version conflict; the replay answers instead.
            let again = try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 1, role: .barista, request: request)
            #expect(again.replayed)
            #expect(again.body == first.body)
            #expect(try await db.scalar("SELECT count(*) FROM order_events WHERE order_id = \(id)", as: Int.self) == 2)
        }
    }

    @Test("the same key with another body is a mismatch and changes nothing") func theSameKeyWithAnotherBodyIsAMismatchAndChangesNothing() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request("k", body: #"{"a":1}"#))
            await #expect(throws: StoreError.idempotencyMismatch) {
                try await store.place(
                    StoreFixtures.placement(posRef: "T-2"), in: .default, role: .pos, request: StoreFixtures.request("k", body: #"{"a":2}"#))
            }
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 1)
        }
    }

    @Test("keys are scoped to the callers role") func keysAreScopedToTheCallersRole() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request("shared")))
            let response = try await store.apply(
                .started(barista: "Sam"), to: id, in: .default, expectedVersion: nil, role: .barista,
                request: StoreFixtures.request("shared", path: "events", scope: "barista"))
            #expect(!response.replayed)
        }
    }

    @Test("an expired key is claimed afresh") func anExpiredKeyIsClaimedAfresh() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request("old", body: "1"))
            _ = try await db.pool.withConnection {
                try await $0.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'")
            }
            let response = try await store.place(
                StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request("old", body: "2"))
            #expect(!response.replayed)
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 2)
        }
    }

    @Test("a refused command writes nothing not even its key") func aRefusedCommandWritesNothingNotEvenItsKey() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            await #expect(throws: StoreError.rejected(.invalidTransition(from: .queued, event: .pickedUp, allowed: [.started, .delayed, .ready, .canceled]))) {
                try await store.apply(.pickedUp, to: id, in: .default, expectedVersion: nil, role: .pos, request: StoreFixtures.request("bad"))
            }
            await #expect(throws: StoreError.rejected(.versionConflict(expected: 7, actual: 1, state: .queued))) {
                try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 7, role: .barista, request: StoreFixtures.request())
            }
            await #expect(throws: StoreError.unknownStore("nowhere")) {
                try await store.place(StoreFixtures.placement(store: "nowhere"), in: .default, role: .pos, request: StoreFixtures.request())
            }
            await #expect(throws: StoreError.unknownOrder) {
                try await store.apply(.pickedUp, to: UUID(), in: .default, expectedVersion: nil, role: .pos, request: StoreFixtures.request())
            }
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM idempotency_keys", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT version FROM orders", as: Int.self) == 1)
            // A refused key stays free: the corrected retry with the same key goes through.
            let retry = try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request("bad"))
            #expect(!retry.replayed)
        }
    }

    @Test("an order command costs two round trips and so does a replay") func anOrderCommandCostsTwoRoundTripsAndSoDoesAReplay() async throws {
        try await TestDatabase.with { db in
            // One connection, so every statement of the command shows in its round-trip count.
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let store = OrderService(database: CremaDatabase(pool: pool, clock: .system), clock: .system)
            _ = try await store.database.stores.put(id: "market-st", name: "Market St", timezone: "America/Los_Angeles", tenant: "default")
            func trips(_ command: () async throws -> CommandResponse) async throws -> (Int, CommandResponse) {
                let before = try await pool.withConnection { $0.roundTrips }
                let response = try await command()
                return (try await pool.withConnection { $0.roundTrips } - before, response)
            }
            let (placing, placed) = try await trips { try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request("p")) }
            let id = try StoreFixtures.orderID(placed)
            let event = { try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request("e")) }
            let (applying, _) = try await trips(event)
            let (replaying, replayed) = try await trips(event)
            #expect(placing == 2)
            #expect(applying == 2)
            // The replay reads and locks as a fresh command would, then reads its stored answer as it rolls back.
            #expect(replaying == 2)
            #expect(replayed.replayed)
            #expect(try await db.scalar("SELECT next_order_number FROM stores", as: Int.self) == 2)
            await pool.close()
        }
    }

    @Test("the command's read names the live endpoints that want its events in its store: not another store's, a disabled one or one for delivery.dead only")
    func theCommandsReadNamesTheEndpointsThatWantItsEvents() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            func wanted() async throws -> [WantingEndpoint] {
                try await store.database.command(in: .default, defaultBundleID: nil) { transaction in
                    guard case .opened(let placement?) = try await transaction.openPlacement(
                        StoreFixtures.request(), store: "market-st", customerRef: "c-9", now: Date())
                    else { throw StoreError.unknownStore("market-st") }
                    return placement.webhookEndpoints
                }
            }
            func endpoint(_ events: String, stores: String? = nil, disabled: Bool = false) async throws {
                _ = try await db.pool.withConnection { c in
                    try await c.query(
                        """
                        INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, stores, sealed_secret, created_at, disabled_at)
                        VALUES ('default', gen_random_uuid(), 'https://93.184.215.14/hooks', \(events)::text[], \(stores)::text[],
                                '\\x00', now(), CASE WHEN \(disabled) THEN now() END)
                        """)
                }
            }
            #expect(try await wanted().isEmpty)
            try await endpoint("{order.changed}", stores: "{other-st}")
            try await endpoint("{order.changed}", disabled: true)
            try await endpoint("{delivery.dead,token.retired}")
            #expect(try await wanted().isEmpty)
            try await endpoint("{activity.ended,delivery.dead}", stores: "{market-st}")
            #expect(try await wanted().map(\.events) == [["activity.ended", "delivery.dead"]])
        }
    }

    @Test("a failure after the state change rolls back everything") func aFailureAfterTheStateChangeRollsBackEverything() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            // A command that claimed its key and took a number, then failed before writing, leaves nothing behind.
            struct DecisionFailed: Error {}
            await #expect(throws: StoreError.self) {
                try await store.database.command(in: .default, defaultBundleID: nil) { transaction in
                    _ = try await transaction.openPlacement(StoreFixtures.request(), store: "market-st", customerRef: "c-9", now: Date())
                    throw DecisionFailed()
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 0)
            #expect(try await db.scalar("SELECT next_order_number FROM stores", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM idempotency_keys", as: Int.self) == 0)
        }
    }

    @Test("a failing write statement rolls back the whole command") func aFailingWriteStatementRollsBackTheWholeCommand() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            // A stray event row at version 2 makes the event insert of the next command fail (23505)
            // after the key was claimed and the order row locked.
            _ = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, actor_role, occurred_at, stream_seq)
                    VALUES ('default', 'market-st', \(id), 2, 'delayed', 'pos', now(), 1000)
                    """)
            }
            let error = await #expect(throws: StoreError.self) {
                try await store.apply(.started(barista: "Sam"), to: id, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request("w"))
            }
            guard case .database(let failure) = error else {
                Issue.record("expected a database error, got \(String(describing: error))")
                return
            }
            #expect(failure.sqlState == PostgresError.SQLState.uniqueViolation)
            let version = try await db.scalar("SELECT version FROM orders", as: Int.self)
            let keys = try await db.scalar("SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'w'", as: Int.self)
            #expect(version == 1)
            #expect(keys == 0)
        }
    }

    @Test("invalid input is refused before the store is looked up") func invalidInputIsRefusedBeforeTheStoreIsLookedUp() async throws {
        try await TestDatabase.with { db in
            let store = OrderService(database: CremaDatabase(pool: db.pool, clock: .system), clock: .system)
            await #expect(throws: StoreError.rejected(.invalidValue(field: "store_id", reason: "must be 1–63 lowercase letters, digits or dashes"))) {
                try await store.place(StoreFixtures.placement(store: "Market St"), in: .default, role: .pos, request: StoreFixtures.request())
            }
        }
    }

    @Test("two concurrent commands on the same version apply exactly once") func twoConcurrentCommandsOnTheSameVersionApplyExactlyOnce() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let id = try StoreFixtures.orderID(
                try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request()))
            async let ready = outcome { try await store.apply(.ready(pickupPoint: nil), to: id, in: .default, expectedVersion: 1, role: .barista, request: StoreFixtures.request(scope: "barista")) }
            async let cancel = outcome { try await store.apply(.canceled(reason: "left"), to: id, in: .default, expectedVersion: 1, role: .pos, request: StoreFixtures.request()) }
            let outcomes = [await ready, await cancel]
            #expect(outcomes.filter { (try? $0.get()) != nil }.count == 1)
            let failure = try #require(outcomes.compactMap { result -> StoreError? in
                if case .failure(let error) = result { return error as? StoreError }
                return nil
            }.first)
            guard case .rejected(.versionConflict(expected: 1, actual: 2, _)) = failure else {
                Issue.record("expected a version conflict, got \(failure)")
                return
            }
            #expect(try await db.scalar("SELECT count(*) FROM order_events WHERE order_id = \(id)", as: Int.self) == 2)
        }
    }

    @Test("concurrent retries with one key place one order") func concurrentRetriesWithOneKeyPlaceOneOrder() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let request = StoreFixtures.request("burst", body: #"{"x":1}"#)
            let responses = try await withThrowingTaskGroup(of: CommandResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: request) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(responses.map(\.body)).count == 1)
            #expect(responses.filter { !$0.replayed }.count == 1)
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 1)
        }
    }

    @Test("the event log refuses updates and deletes") func theEventLogRefusesUpdatesAndDeletes() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            _ = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
            for statement in ["UPDATE order_events SET event_type = 'ready'", "DELETE FROM order_events"] {
                let error = await #expect(throws: PostgresError.self) {
                    try await db.pool.withConnection { try await $0.simpleQuery(statement) }
                }
                #expect(error?.sqlState == "23001")
            }
        }
    }

    @Test("an unknown timezone is refused") func anUnknownTimezoneIsRefused() async throws {
        try await TestDatabase.with { db in
            await #expect(throws: StoreError.invalidTimezone("Mars/Olympus")) {
                try await OrderService(database: CremaDatabase(pool: db.pool, clock: .system), clock: .system).database.stores.put(id: "x", name: "X", timezone: "Mars/Olympus", tenant: "default")
            }
        }
    }

    @Test("putting a store twice renames it") func puttingAStoreTwiceRenamesIt() async throws {
        try await TestDatabase.with { db in
            let store = OrderService(database: CremaDatabase(pool: db.pool, clock: .system), clock: .system)
            let first = try await store.database.stores.put(id: "x", name: "Old", timezone: "UTC", tenant: "default")
            let second = try await store.database.stores.put(id: "x", name: "New", timezone: "Asia/Tokyo", tenant: "default")
            #expect(first.created && !second.created)
            #expect(second.store.name == "New" && second.store.timezone == "Asia/Tokyo")
            #expect(second.store.createdAt == first.store.createdAt)
        }
    }

    private func outcome(_ body: () async throws -> CommandResponse) async -> Result<CommandResponse, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }
}
