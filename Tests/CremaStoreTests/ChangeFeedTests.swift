import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaService
@testable import CremaStore
import CremaTestSupport
import Foundation
import Logging
import Testing

/// Which stores changed, told in process after commit and to other processes by a coalesced NOTIFY outside the
/// event's transaction, against a real server. Two feeds on one database stand for two `crema` processes. Waits
/// are for events (the suite's time limit bounds them); the coalescing window ends when a test says so.
@Suite(.timeLimit(.minutes(2))) struct ChangeFeedTests {
    static let marketSt = StoreKey(tenant: "default", store: "market-st")
    static let pier39 = StoreKey(tenant: "default", store: "pier-39")
    static let ferryBldg = StoreKey(tenant: "default", store: "ferry-bldg")

    @Test("an events transaction sends no notification") func anEventsTransactionSendsNoNotification() async throws {
        try await TestDatabase.with { db in
            let listener = PostgresListener(conninfo: db.conninfo, channels: [ChangeFeed.channel], logger: Logger(label: "test"))
            let events = listener.events()
            #expect(await next(events) == .reconnected)
            // No feed: whatever reaches the channel now comes from the event's own transaction.
            let store = try await StoreFixtures.store(in: db)
            let id = try await place(store)
            try await start(store, id)
            // Notifications arrive in commit order, so the marker comes first unless a command's transaction notified.
            _ = try await db.pool.withConnection { try await $0.query("SELECT pg_notify(\(ChangeFeed.channel), \("marker"))") }
            #expect(await next(events).flatMap(\.payload) == "marker")
            await listener.shutdown()
        }
    }

    @Test("a commit wakes this process with exactly the store it changed") func aCommitWakesThisProcessWithExactlyTheStoreItChanged() async throws {
        try await TestDatabase.with { db in
            let feed = ChangeFeed(pool: db.pool, conninfo: nil, clock: .system, logger: Logger(label: "test"))
            let store = try await StoreFixtures.store(in: db, changes: feed)
            _ = try await store.database.stores.put(id: "pier-39", name: "Pier 39", timezone: "UTC", tenant: "default")
            let changes = feed.subscribe(to: .orders)
            let id = try await place(store)
            #expect(await next(changes) == .stores([Self.marketSt]))
            try await place(store, in: "pier-39")
            #expect(await next(changes) == .stores([Self.pier39]))
            try await start(store, id)
            #expect(await next(changes) == .stores([Self.marketSt]))
        }
    }

    @Test("a commit wakes the dispatchers only when it queued work for them") func aCommitWakesTheDispatchersOnlyWhenItQueuedWorkForThem() async throws {
        try await TestDatabase.with { db in
            let feed = ChangeFeed(pool: db.pool, conninfo: nil, clock: .system, logger: Logger(label: "test"))
            let store = try await StoreFixtures.store(in: db, changes: feed)
            _ = try await store.database.stores.put(id: "pier-39", name: "Pier 39", timezone: "UTC", tenant: "default")
            _ = try await store.database.stores.put(id: "ferry-bldg", name: "Ferry Building", timezone: "UTC", tenant: "default")
            // c-9 has an alert token; the one webhook endpoint wants order.changed from pier-39 only.
            _ = try await store.database.tokens.putCustomerToken(
                customerRef: "c-9", tenant: "default", kind: .alert, token: String(repeating: "ab", count: 32), environment: .production,
                bundleID: nil, replaces: nil, limit: 20)
            _ = try await db.pool.withConnection { c in
                try await c.query(
                    """
                    INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, stores, sealed_secret, created_at)
                    VALUES ('default', gen_random_uuid(), 'https://93.184.215.14/hooks', '{order.changed}', '{pier-39}', '\\x00', now())
                    """)
            }
            let orders = feed.subscribe(to: .orders)
            let pushes = feed.subscribe(to: .pushes)
            let webhooks = feed.subscribe(to: .webhooks)

            try await place(store, in: "ferry-bldg", customer: "c-nobody")  // nothing to send
            try await place(store, in: "pier-39", customer: "c-nobody")  // a webhook, no push
            let id = try await place(store, in: "market-st", customer: "c-9")  // pushes (at the latest when ready), no webhook
            _ = try await store.apply(
                .ready(pickupPoint: "counter"), to: id, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
            try await place(store, in: "pier-39", customer: "c-nobody")  // a webhook again
            let last = try await place(store, in: "ferry-bldg", customer: "c-9")  // pushes again, elsewhere
            _ = try await store.apply(
                .ready(pickupPoint: "counter"), to: last, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())

            #expect(await next(orders) == .stores([Self.ferryBldg]))
            #expect(await next(orders) == .stores([Self.pier39]))
            #expect(await next(orders) == .stores([Self.marketSt]))
            // The pushes subscriber hears market-st (once or twice: placing may queue one already), then ferry-bldg.
            var heard: [ChangeFeed.Change] = []
            while let change = await next(pushes), change != .stores([Self.ferryBldg]) { heard.append(change) }
            #expect(!heard.isEmpty && heard.allSatisfy { $0 == .stores([Self.marketSt]) })
            #expect(await next(webhooks) == .stores([Self.pier39]))
            #expect(await next(webhooks) == .stores([Self.pier39]))
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries", as: Int.self) == 2)
            #expect(try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE state = 'pending' AND store_id = 'pier-39'", as: Int.self) == 0)
        }
    }

    @Test("a rolled back command wakes nobody") func aRolledBackCommandWakesNobody() async throws {
        try await TestDatabase.with { db in
            let feed = ChangeFeed(pool: db.pool, conninfo: nil, clock: .system, logger: Logger(label: "test"))
            let store = try await StoreFixtures.store(in: db, changes: feed)
            _ = try await store.database.stores.put(id: "pier-39", name: "Pier 39", timezone: "UTC", tenant: "default")
            let changes = feed.subscribe(to: .orders)
            // The command claims its key and reserves a number, then fails before its write (which commits with it).
            await #expect(throws: StoreError.self) {
                try await store.database.command(in: .default, defaultBundleID: nil) { transaction -> Void in
                    let opening = try await transaction.openPlacement(StoreFixtures.request(), store: "market-st", customerRef: nil, now: Date())
                    guard case .opened(let reserved?) = opening else { throw StoreError.unknownStore("market-st") }
                    _ = try OrderStateMachine.place(StoreFixtures.placement(), id: UUID(), number: reserved.number, at: Date())
                    throw StoreError.unknownOrder
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 0)
            // Changes reach a subscriber in commit order: the next one it sees is this later commit's.
            try await place(store, in: "pier-39")
            #expect(await next(changes) == .stores([Self.pier39]))
        }
    }

    @Test("a change committed in one process wakes another") func aChangeCommittedInOneProcessWakesAnother() async throws {
        try await TestDatabase.with { db in
            let here = ChangeFeed(pool: db.pool, conninfo: db.conninfo, clock: .system, logger: Logger(label: "here"))
            let there = ChangeFeed(pool: db.pool, conninfo: db.conninfo, clock: .system, logger: Logger(label: "there"))
            let store = try await StoreFixtures.store(in: db, changes: here)
            let changes = there.subscribe(to: .orders)
            try await running([here, there]) {
                // Its listener is in place (PostgreSQL keeps no notification for a session that is not listening).
                #expect(await next(changes) == .everything)
                try await place(store)
                #expect(await next(changes) == .stores([Self.marketSt]))
            }
        }
    }

    @Test("another processs dispatcher wakes only for announced work for it") func anotherProcesssDispatcherWakesOnlyForAnnouncedWorkForIt() async throws {
        try await TestDatabase.with { db in
            let here = ChangeFeed(pool: db.pool, conninfo: db.conninfo, clock: .system, logger: Logger(label: "here"))
            let there = ChangeFeed(pool: db.pool, conninfo: db.conninfo, clock: .system, logger: Logger(label: "there"))
            let store = try await StoreFixtures.store(in: db, changes: here)
            _ = try await store.database.stores.put(id: "ferry-bldg", name: "Ferry Building", timezone: "UTC", tenant: "default")
            _ = try await store.database.tokens.putCustomerToken(
                customerRef: "c-9", tenant: "default", kind: .alert, token: String(repeating: "ab", count: 32), environment: .production,
                bundleID: nil, replaces: nil, limit: 20)
            let orders = there.subscribe(to: .orders)
            let pushes = there.subscribe(to: .pushes)
            try await running([here, there]) {
                #expect(await next(orders) == .everything)
                #expect(await next(pushes) == .everything)
                // The first change after a quiet window is announced alone; it queued nothing.
                try await place(store, in: "ferry-bldg", customer: "c-nobody")
                #expect(await next(orders) == .stores([Self.ferryBldg]))
                let id = try await place(store, in: "market-st", customer: "c-9")
                _ = try await store.apply(
                    .ready(pickupPoint: "counter"), to: id, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
                #expect(await next(pushes) == .stores([Self.marketSt]))
            }
        }
    }

    @Test("a process skips its own notification") func aProcessSkipsItsOwnNotification() async throws {
        try await TestDatabase.with { db in
            let here = ChangeFeed(pool: db.pool, conninfo: db.conninfo, clock: .system, logger: Logger(label: "here"))
            let there = ChangeFeed(pool: db.pool, conninfo: nil, clock: .system, logger: Logger(label: "there"))
            let store = try await StoreFixtures.store(in: db, changes: here)
            let elsewhere = OrderService(database: CremaDatabase(pool: db.pool, changes: there, clock: .system), clock: .system)
            _ = try await store.database.stores.put(id: "pier-39", name: "Pier 39", timezone: "UTC", tenant: "default")
            let listener = PostgresListener(conninfo: db.conninfo, channels: [ChangeFeed.channel], logger: Logger(label: "test"))
            let notifications = listener.events()
            #expect(await next(notifications) == .reconnected)
            let changes = here.subscribe(to: .orders)
            try await running([here, there]) {
                #expect(await next(changes) == .everything)
                try await place(store)
                #expect(await next(changes) == .stores([Self.marketSt]))  // at commit, in process
                // Its announcement has gone out; another process's change is committed after it.
                #expect(await next(notifications).flatMap(\.payload).map(storeKeys) == [Self.marketSt])
                try await place(elsewhere, in: "pier-39")
                // Both reach this process's listener in that order; its own is not published a second time.
                #expect(await next(changes) == .stores([Self.pier39]))
            }
            await listener.shutdown()
        }
    }

    @Test("a burst of commits within one window is announced by one notification") func aBurstOfCommitsWithinOneWindowIsAnnouncedByOneNotification() async throws {
        try await TestDatabase.with { db in
            let windows = Windows()
            let feed = ChangeFeed(pool: db.pool, conninfo: nil, clock: windows.clock, logger: Logger(label: "test"))
            let store = try await StoreFixtures.store(in: db, changes: feed)
            let stores = (1...6).map { StoreKey(tenant: "default", store: "store-\($0)") }
            for key in stores { _ = try await store.database.stores.put(id: key.store, name: key.store, timezone: "UTC", tenant: "default") }
            let listener = PostgresListener(conninfo: db.conninfo, channels: [ChangeFeed.channel], logger: Logger(label: "test"))
            let notifications = listener.events()
            #expect(await next(notifications) == .reconnected)
            try await running([feed]) {
                // The first change after a quiet window goes out at once, and opens a window.
                try await place(store, in: stores[0].store)
                #expect(await next(notifications).flatMap(\.payload).map(storeKeys) == [stores[0]])
                // Six commits to five stores within that window, then the window ends: one NOTIFY names the five.
                for key in stores.dropFirst() + [stores[1]] {
                    try await place(store, in: key.store)
                }
                windows.end()
                #expect(await next(notifications).flatMap(\.payload).map(storeKeys) == Set(stores.dropFirst()))
                // Nothing is left over: the next change is announced alone.
                windows.end()
                try await place(store, in: stores[0].store)
                #expect(await next(notifications).flatMap(\.payload).map(storeKeys) == [stores[0]])
            }
            await listener.shutdown()
        }
    }

    @Test("stores that do not fit one payload are announced as every store") func storesThatDoNotFitOnePayloadAreAnnouncedAsEveryStore() {
        let few: Set<StoreKey> = [Self.marketSt, Self.pier39]
        let many = Set((0..<500).map { StoreKey(tenant: "tenant-\($0)", store: "a-store-with-a-rather-long-name-\($0)") })
        #expect(ChangeFeed.change(announcedIn: ChangeFeed.payload(announcing: .stores(few), queued: [], from: "a"), skipping: "b")?.change == .stores(few))
        let payload = ChangeFeed.payload(announcing: .stores(many), queued: [], from: "a")
        #expect(payload.utf8.count < 8000)
        #expect(ChangeFeed.change(announcedIn: payload, skipping: "b")?.change == .everything)
        #expect(ChangeFeed.change(announcedIn: payload, skipping: "a") == nil)
        // An older crema's per-event payload wakes everything.
        #expect(ChangeFeed.change(announcedIn: #"{"tenant_id":"default","store_id":"market-st"}"#, skipping: "b")?.change == .everything)
    }

    @Test("a process knows its own announcement by its first bytes or by decoding and never mistakes a longer id for it")
    func aProcessKnowsItsOwnAnnouncementByItsFirstBytesOrByDecodingAndNeverMistakesALongerIDForIt() {
        let store: Set = [StoreKey(tenant: "default", store: "market-st")]
        #expect(ChangeFeed.change(announcedIn: ChangeFeed.payload(announcing: .stores(store), queued: [], from: "a"), skipping: "a") == nil)
        #expect(ChangeFeed.change(announcedIn: #"{ "stores": [], "from": "a" }"#, skipping: "a") == nil)
        #expect(ChangeFeed.change(announcedIn: ChangeFeed.payload(announcing: .stores(store), queued: [], from: "ab"), skipping: "a")?.change == .stores(store))
    }

    @Test("an announcement says what its commits queued and one that does not wakes every subscriber") func anAnnouncementSaysWhatItsCommitsQueuedAndOneThatDoesNotWakesEverySubscriber() {
        let all: ChangeFeed.Interest = [.orders, .pushes, .webhooks]
        let stores: Set<StoreKey> = [Self.marketSt]
        for queued: ChangeFeed.Interest in [[], [.pushes], [.webhooks], [.pushes, .webhooks]] {
            let announced = ChangeFeed.change(announcedIn: ChangeFeed.payload(announcing: .stores(stores), queued: queued, from: "a"), skipping: "b")
            #expect(announced == ChangeFeed.Announced(change: .stores(stores), queued: queued.union(.orders)))
        }
        // "Every store" still says what was queued.
        let many = Set((0..<500).map { StoreKey(tenant: "t", store: "a-store-with-a-rather-long-name-\($0)") })
        #expect(ChangeFeed.change(announcedIn: ChangeFeed.payload(announcing: .stores(many), queued: [.webhooks], from: "a"), skipping: "b")
            == ChangeFeed.Announced(change: .everything, queued: [.orders, .webhooks]))
        // A crema from before this field, and one this version cannot read, wake everyone.
        #expect(ChangeFeed.change(announcedIn: #"{"from":"a","stores":[["default","market-st"]]}"#, skipping: "b")
            == ChangeFeed.Announced(change: .stores(stores), queued: all))
        #expect(ChangeFeed.change(announcedIn: "not json", skipping: "b") == ChangeFeed.Announced(change: .everything, queued: all))
    }

    @Test("an announcement is written as the encoder with sorted keys writes it, slashes and quotes escaped")
    func anAnnouncementIsWrittenAsTheEncoderWithSortedKeysWritesIt() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let names = ["default", "market-st", "a/b", "\"q\" \\ \n\u{1}", "日本☕️", ""]
        var written = 0
        for from in ["crema-1", "host/42 \"x\""] {
            for stores in [nil, [], [["default", "market-st"]], [names, names.reversed()], names.map { [$0, $0 + "/" + $0] }] as [[[String]]?] {
                for queued in [nil, [], ["orders"], ["orders", "pushes", "webhooks"]] as [[String]?] {
                    let announcement = ChangeFeed.Announcement(from: from, stores: stores, queued: queued)
                    #expect(announcement.json == String(decoding: try encoder.encode(announcement), as: UTF8.self))
                    written += 1
                }
            }
        }
        #expect(written == 40)
    }
}

// MARK: - Helpers

/// Stands in for the coalescing window's clock: a window ends when the test calls `end()`.
private final class Windows: Sendable {
    private let ends = AsyncStream.makeStream(of: Void.self)

    /// The feed's clock: its sleeps end at `end()`; the feed reads no time from it.
    var clock: CremaClock {
        CremaClock(now: { Date(timeIntervalSince1970: 0) }) { [ends] _ in
            for await _ in ends.stream { return }
        }
    }

    func end() { ends.continuation.yield() }
}

/// Runs `feeds` as services for the duration of `body`.
private func running(_ feeds: [ChangeFeed], _ body: () async throws -> Void) async throws {
    let tasks = feeds.map { feed in Task { try await feed.run() } }
    defer { for task in tasks { task.cancel() } }
    try await body()
    for task in tasks {
        task.cancel()
        _ = await task.result
    }
}

/// The next element of `stream` (nil once it ended). A change that never comes fails the suite's time limit.
private func next<Element: Sendable>(_ stream: AsyncStream<Element>) async -> Element? {
    for await element in stream { return element }
    return nil
}

/// Places an order in `storeID` for `customer` (the fixtures' c-9 unless told); returns its id.
@discardableResult
private func place(_ service: OrderService, in storeID: String = "market-st", customer: String? = nil) async throws -> UUID {
    var placement = StoreFixtures.placement(store: storeID)
    if let customer { placement.customerRef = customer }
    let placed = try await service.place(placement, in: .default, role: .pos, request: StoreFixtures.request())
    return try StoreFixtures.orderID(placed)
}

/// Moves order `id` on with a `started` event.
private func start(_ service: OrderService, _ id: UUID) async throws {
    _ = try await service.apply(
        .started(barista: "Sam"), to: id, in: .default, expectedVersion: nil, role: .barista, request: StoreFixtures.request())
}

/// The stores a change feed's announcement names.
private func storeKeys(_ payload: String) -> Set<StoreKey> {
    let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any]
    let pairs = object?["stores"] as? [[String]] ?? []
    return Set(pairs.map { StoreKey(tenant: $0[0], store: $0[1]) })
}

extension PostgresListenerEvent {
    fileprivate var payload: String? {
        guard case .notification(_, let payload, _) = self else { return nil }
        return payload
    }
}
