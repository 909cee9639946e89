import CremaAPNsSimulator
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Logging
import Prometheus
import Testing

/// The worker loops on the test clock: the dispatcher's poll fallback and the sweeper's passes run when the test moves
/// the clock past their interval, and not before. Nothing here waits for time: the waits below are for the workers'
/// database and network round trips, and each is bounded.
@Suite(.serialized, .timeLimit(.minutes(2))) struct VirtualTimeWorkerTests {
    typealias H = DeliveryHarness

    /// The alert row of `order` in the outbox: its state, attempts and when it is due.
    static func alert(_ h: H, _ order: String) async throws -> (state: String, attempts: Int, runAt: Date)? {
        let id = try #require(UUID(uuidString: order))
        return try await h.db.pool.withConnection { connection in
            try await connection.query(
                "SELECT state, attempts, run_at FROM delivery_outbox WHERE order_id = \(id) AND push_type = 'alert' AND state <> 'skipped'"
            ).map { (try $0.decode("state", as: String.self), try $0.decode("attempts", as: Int.self), try $0.decode("run_at", as: Date.self)) }
        }.first
    }

    /// Waits for the workers' round trips (not for time: the clock does not move) until `condition` holds.
    static func until(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<1_500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }

    @Test("A retry is sent when the clock passes its backoff and the dispatcher's poll fallback, both on the test clock, and not before")
    func dispatcherRetriesOnTheTestClock() async throws {
        var settings = H.fastRetries
        settings.workers = 1
        // Backoffs of seconds and a poll fallback of ten minutes (within the alert's hour of life), all on the test
        // clock: waited for, this test would take minutes.
        settings.retry = RetryPolicy(base: 10, cap: 20, maxAttempts: 8)
        settings.pollInterval = .seconds(600)
        settings.maintenanceInterval = .seconds(600)
        try await H.run(dispatcher: settings) { h in
            let failing = H.token(61)
            h.simulator.inject(.status(503, reason: "ServiceUnavailable", retryAfter: nil, count: 1, token: failing))
            let first = try await h.readyAlert(customer: "c-virtual-1", token: failing)
            #expect(try await Self.until { try await Self.alert(h, first).map { $0.state == "pending" && $0.attempts == 1 } ?? false })
            let retry = try #require(try await Self.alert(h, first))
            #expect(retry.runAt > h.clock.now, "the retry waits for the backoff")
            #expect(h.simulator.records(token: failing).map(\.status) == [503])

            // Another order's push rings the dispatcher: its claim takes what is due, not the retry.
            let other = H.token(62)
            let second = try await h.readyAlert(customer: "c-virtual-2", token: other)
            #expect(try await Self.until { try await Self.alert(h, second)?.state == "sent" })
            #expect(try await Self.alert(h, first)?.state == "pending")

            // Past the backoff and the idle dispatcher's poll fallback (ten minutes of this clock; nothing else rings
            // it): the retry goes. On real time this would take ten minutes, past the wait below.
            await h.clock.advance(retry.runAt.timeIntervalSince(h.clock.now) + 600)
            #expect(try await Self.until { try await Self.alert(h, first)?.state == "sent" })
            #expect(h.simulator.records(token: failing).map(\.status) == [503, 200])
        }
    }

    @Test("A claim whose answer a failover lost is taken back as soon as the dispatcher reaches the database again, not when its lease runs out")
    func aLostClaimIsTakenBackOnReconnect() async throws {
        var settings = H.fastRetries
        settings.workers = 1
        // The test makes every commit wait for a synchronous standby that never comes, which the shared cluster's other
        // suites must never see: a private cluster.
        try await Self.withPrivateCluster { server in
            try await H.run(dispatcher: settings, dispatchHeld: true, server: server) { h in
                let token = H.token(64)
                let order = try await h.readyAlert(customer: "c-lost-claim", token: token)
                #expect(try await Self.alert(h, order)?.state == "pending")
                let admin = try await PostgresConnection.connect(server)
                // From now on a commit is written on the primary, then waits for the standby's acknowledgement: the
                // moment a failover's kill -9 takes the answer away.
                try await Self.holdCommits(admin, server: server)

                // The dispatcher claims the alert: committed, its answer held; then the connection dies with the primary.
                h.startDispatching()
                #expect(try await Self.until { try await Self.waitingForStandby(admin, database: h.db.name) > 0 })
                _ = try await admin.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = \(h.db.name)")
                // The database takes writes again (the new primary): the claim is there, in flight for a minute's lease.
                try await admin.simpleQuery("ALTER SYSTEM RESET synchronous_standby_names")
                try await admin.simpleQuery("SELECT pg_reload_conf()")
                #expect(try await Self.until { try await Self.alert(h, order)?.state == "inflight" })
                #expect(h.simulator.records(token: token).isEmpty)

                // The dispatcher's next try is its poll fallback, a microsecond of the test clock (moved a millisecond at a
                // time, whenever the worker went back to sleep): it takes the claim back and sends the push at once, with
                // the lease (60 s) far from over and the lost attempt not counted.
                let start = h.clock.now
                #expect(try await Self.until {
                    await h.clock.advance(0.001)
                    return try await Self.alert(h, order)?.state == "sent"
                })
                #expect(try await Self.alert(h, order)?.attempts == 1)
                #expect(h.simulator.records(token: token).map(\.status) == [200])
                #expect(h.clock.now.timeIntervalSince(start) < 5)
                await admin.close()
            }
        }
    }

    /// Makes every commit on the cluster wait for a synchronous standby that never comes, and returns once it is in force
    /// (the setting reaches the backends through the checkpointer, a moment after the reload): a probe insert is tried
    /// until one waits, then released.
    static func holdCommits(_ admin: PostgresConnection, server: String) async throws {
        let probe = try await PostgresConnection.connect(server)
        try await probe.simpleQuery("CREATE TABLE sync_probe (x int)")
        try await admin.simpleQuery("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        try await admin.simpleQuery("SELECT pg_reload_conf()")
        var held = false
        for _ in 0..<100 where !held {
            let finished = TestEvent()
            let insert = Task {
                defer { finished.signal() }
                try await probe.simpleQuery("INSERT INTO sync_probe VALUES (1)")
            }
            held = try await Self.until { try await waitingForStandby(admin, database: "crema") > 0 || finished.happened } && !finished.happened
            _ = try await admin.query("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = 'crema'")
            try await insert.value
        }
        await probe.close()
        #expect(held, "a commit never waited for the standby")
    }

    /// Backends of `database` whose commit waits for a synchronous standby.
    static func waitingForStandby(_ admin: PostgresConnection, database: String) async throws -> Int {
        try await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'SyncRep' AND datname = \(database)")
            .first?.decode("n", as: Int.self) ?? 0
    }

    /// Runs `body` with the admin conninfo of a private cluster, stopped and removed afterwards.
    static func withPrivateCluster(_ body: (String) async throws -> Void) async throws {
        // Under the temporary folder, with a short name: a Unix socket's path must fit in 107 bytes.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crema-r/\(UUID().uuidString.prefix(8).lowercased())")
        let cluster = EmbeddedCluster(directory: folder.appendingPathComponent("p"), database: "crema")
        do {
            try await body(try await cluster.start().conninfo)
        } catch {
            try? await cluster.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        try await cluster.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    @Test("The sweeper's loop closes an overdue order at its next pass on the test clock, not when the order falls due")
    func sweeperLoopRunsOnTheTestClock() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let service = OrderService(database: CremaDatabase(pool: db.pool, clock: clock.crema), clock: clock.crema)
            // A pass an hour of this clock apart: waited for, this test would not end.
            let sweeper = LifecycleSweeper(service: service, retentionDays: 30, interval: .seconds(3_600), clock: clock.crema, logger: Logger(label: "test"))
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default", readyExpiryMinutes: 30)
            let id = try await OrderServiceFixture.place(service, at: clock)
            try await OrderServiceFixture.apply(service, .started(barista: "Sam"), to: id)
            try await OrderServiceFixture.apply(service, .ready(pickupPoint: nil), to: id)
            func state() async throws -> OrderState? { try await service.database.orders.order(id: id, in: .default)?.order.state }

            let running = Task { try await sweeper.run() }
            // Expiry and retention each made their first pass (nothing overdue yet) and sleep on the clock.
            #expect(await clock.waitForSleeps(2))
            #expect(try await state() == .ready)

            // The order is overdue from 30 minutes on, but the next pass is at the hour.
            await clock.advance(31 * 60)
            #expect(clock.sleepsBegun == 2, "no pass ran")
            #expect(try await state() == .ready)

            // At the hour both loops wake, pass once, and sleep again: the order is closed by then.
            await clock.advance(29 * 60)
            #expect(await clock.waitForSleeps(4))
            #expect(try await state() == .canceled)
            let detail = try #require(try await service.database.orders.order(id: id, in: .default))
            #expect(detail.events.filter { $0.type == .expired }.count == 1)

            running.cancel()
            _ = await running.result
        }
    }
}

/// The webhook dispatcher's maintenance on the test clock: a lease that ran out is rescued at the next tick.
@Suite(.serialized, .timeLimit(.minutes(2))) struct VirtualTimeWebhookMaintenanceTests {
    @Test("A webhook delivery whose sender died is rescued at the next maintenance tick of the test clock, not when its lease runs out")
    func maintenanceRescuesOnTheTestClock() async throws {
        // A tick a minute of the harness's clock apart: waited for, this test would not end.
        try await WebhookHarness.run(maintenanceInterval: .seconds(60)) { h in
            let receiver = try await h.receiver()
            receiver.answer(.status(500))
            let (endpoint, _) = try await h.register(receiver.url())
            _ = try await h.lifecycle()
            #expect(try await h.eventually { try await h.settled(endpoint, count: 1) })
            // As if a process claimed the retry and stopped: in flight, its lease running out in twenty seconds.
            let id = try #require(UUID(uuidString: endpoint))
            try await h.db.pool.withConnection { connection in
                _ = try await connection.query(
                    "UPDATE webhook_deliveries SET state = 'inflight', locked_until = \(h.clock.now.addingTimeInterval(20)) WHERE endpoint_id = \(id)")
            }

            // The lease ran out at 20 s, but the next tick is at a minute: still in flight.
            await h.clock.advance(30)
            #expect(try await h.deliveries(endpoint).map(\.state) == ["inflight"])

            // At the tick it is rescued, found due, and tried again (recorded once the receiver answered).
            await h.clock.advance(31)
            #expect(try await h.eventually { try await h.deliveries(endpoint).first.map { $0.attempts == 2 && $0.state == "pending" } ?? false })
            #expect(receiver.requests.count == 2)
            try await receiver.stop()
        }
    }
}
