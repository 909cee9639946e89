import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// The outbox mechanics a dispatcher relies on, against a real database: claiming under a lease, rescuing
/// expired leases, recording outcomes (with token retirement) and pruning.
@Suite struct DeliveryStoreTests {
    /// Places an order for a customer with an alert token and makes it ready: one pending alert push.
    func pendingAlert(_ db: TestDatabase) async throws -> (OrderService, UUID) {
        let store = try await StoreFixtures.store(in: db)
        _ = try await store.database.tokens.putCustomerToken(
            customerRef: "c-9", tenant: "default", kind: .alert, token: String(repeating: "ab", count: 32), environment: .production, bundleID: nil, replaces: nil, limit: 20)
        let placed = try await store.place(StoreFixtures.placement(), in: .default, role: .pos, request: StoreFixtures.request())
        let id = try StoreFixtures.orderID(placed)
        _ = try await store.apply(
            .ready(pickupPoint: "counter"), to: id, in: .default, expectedVersion: nil, role: .barista,
            request: StoreFixtures.request(scope: "barista"))
        return (store, id)
    }

    /// Gives the default tenant an endpoint for `events` (a text array) and leaves the pending push its last attempt.
    func lastAttemptTold(_ db: TestDatabase, events: String) async throws {
        try await db.pool.withConnection { c in
            _ = try await c.query(
                """
                INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                VALUES ('default', gen_random_uuid(), 'https://93.184.215.14/hooks', \(events)::text[], '\\x00', now())
                """)
            _ = try await c.query("UPDATE delivery_outbox SET attempts = max_attempts - 1")
        }
    }

    @Test("a claimed row is leased: a second claim skips it, and the token comes from its target")
    func claimLeases() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let first = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date())
            #expect(first.count == 1)
            #expect(first.first?.token == String(repeating: "ab", count: 32))
            #expect(first.first?.attempts == 1)
            #expect(first.first?.pushType == .alert)
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).isEmpty)
        }
    }

    @Test("a row is due and its lease ends by the dispatcher's clock, not the database's")
    func dueByTheDispatchersClock() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let plannedAt = try await db.scalar("SELECT run_at FROM delivery_outbox WHERE push_type = 'alert' AND state = 'pending'", as: Date.self)
            // A minute before the row's time by the dispatcher's clock it is not due, whatever the database's clock says.
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: plannedAt.addingTimeInterval(-60)).isEmpty)
            let claimed = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: plannedAt)
            #expect(claimed.count == 1)
            let lease = try await db.scalar("SELECT locked_until FROM delivery_outbox WHERE state = 'inflight'", as: Date.self)
            #expect(abs(lease.timeIntervalSince(plannedAt) - 60) < 0.001)
        }
    }

    @Test("an expired lease goes back to pending, and to dead once its attempts are used up")
    func rescue() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimedAt = Date()
            _ = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt)
            #expect(try await deliveries.rescueExpiredLeases(at: claimedAt.addingTimeInterval(59)) == 0)
            // The lease runs out on the dispatcher's clock: the clock is moved past it rather than waited for.
            #expect(try await deliveries.rescueExpiredLeases(at: claimedAt.addingTimeInterval(61)) == 1)
            #expect(try await db.scalar("SELECT state FROM delivery_outbox WHERE push_type = 'alert' AND state <> 'skipped'", as: String.self) == "pending")
            try await db.pool.withConnection { c in _ = try await c.query("UPDATE delivery_outbox SET attempts = max_attempts - 1") }
            let reclaimedAt = claimedAt.addingTimeInterval(120)
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: reclaimedAt).count == 1)
            #expect(try await deliveries.rescueExpiredLeases(at: reclaimedAt.addingTimeInterval(61)) == 1)
            #expect(try await db.scalar("SELECT state FROM delivery_outbox WHERE push_type = 'alert' AND state <> 'skipped'", as: String.self) == "dead")
        }
    }

    @Test("a claim whose answer was lost is taken back by its lease id at once: pending, its attempt not counted, other leases untouched")
    func releaseByLease() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let lost = UUID()
            let claimedAt = Date()
            // The claim commits; its answer never reaches the dispatcher, which knows only the id it chose.
            _ = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt, leaseID: lost)
            #expect(try await deliveries.release(leases: [UUID()]) == 0)
            #expect(try await db.scalar("SELECT state FROM delivery_outbox WHERE push_type = 'alert' AND state <> 'skipped'", as: String.self) == "inflight")
            #expect(try await deliveries.release(leases: [lost]) == 1)
            // Due again within the lease, as its first attempt.
            let again = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt.addingTimeInterval(1))
            #expect(again.map(\.attempts) == [1])
            // Released once: the lease names no row any more, and the new claim's row is not the old lease's.
            #expect(try await deliveries.release(leases: [lost]) == 0)
        }
    }

    @Test("a push that dies because its last attempt's lease ran out is told as delivery.dead, once, to the endpoint that wants it")
    func deathByLeaseIsTold() async throws {
        try await TestDatabase.with { db in
            let (_, orderID) = try await pendingAlert(db)
            try await lastAttemptTold(db, events: "{delivery.dead}")
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimedAt = Date()
            _ = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt)
            let expired = claimedAt.addingTimeInterval(61)
            #expect(try await deliveries.rescueExpiredLeases(at: expired) == 1)
            #expect(try await deliveries.rescueExpiredLeases(at: expired) == 0)
            let body = try await db.scalar("SELECT body::text FROM webhook_events WHERE event_type = 'delivery.dead'", as: String.self)
            let data = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
            let delivery = try #require((data["data"] as? [String: Any])?["delivery"] as? [String: Any])
            #expect(delivery["order_id"] as? String == orderID.uuidString.lowercased())
            #expect(delivery["apns_reason"] as? String == "lease expired after the last attempt")
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries", as: Int.self) == 1)
        }
    }

    @Test("a late outcome that would kill a row its rescue already killed writes no second delivery.dead, and retires no token twice")
    func lateDeathIsToldOnce() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            try await lastAttemptTold(db, events: "{delivery.dead,token.retired}")
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimedAt = Date()
            let claimed = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt).first)
            #expect(try await deliveries.rescueExpiredLeases(at: claimedAt.addingTimeInterval(61)) == 1)
            // The dispatcher that held the lease comes back with APNs's 410: the row is dead already, by its rescue.
            try await deliveries.record(
                [DeliveryResult(delivery: claimed, outcome: .tokenRetired(status: 410, reason: "Unregistered", since: nil))],
                now: claimedAt.addingTimeInterval(62))
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE event_type = 'delivery.dead'", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT last_reason FROM delivery_outbox WHERE state = 'dead'", as: String.self) == "lease expired after the last attempt")
            // The token was still the customer's: APNs's answer retires it, once, and tells it.
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens WHERE retired_at IS NOT NULL", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE event_type = 'token.retired'", as: Int.self) == 1)
            try await deliveries.record(
                [DeliveryResult(delivery: claimed, outcome: .tokenRetired(status: 410, reason: "Unregistered", since: nil))],
                now: claimedAt.addingTimeInterval(63))
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events", as: Int.self) == 2)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries", as: Int.self) == 2)
        }
    }

    @Test("each tenant's outcomes are a transaction of their own: one tenant's failing record leaves another's recorded, and the failure is thrown")
    func tenantsRecordApart() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimed = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date()).first)
            // A tenant sorted before `default` whose outcome PostgreSQL refuses (a NUL in text): its flight fails first.
            var broken = claimed
            broken.tenantID = "broken"
            broken.storeID = "a\u{0}b"
            await #expect(throws: PostgresError.self) {
                try await deliveries.record(
                    [DeliveryResult(delivery: broken, outcome: .sent(status: 200, apnsID: nil)),
                     DeliveryResult(delivery: claimed, outcome: .sent(status: 200, apnsID: nil))], now: Date())
            }
            #expect(try await db.scalar("SELECT state FROM delivery_outbox WHERE push_type = 'alert' AND state <> 'skipped'", as: String.self) == "sent")
        }
    }

    @Test("a late outcome of an attempt whose lease ran out, and whose row was claimed again, changes nothing")
    func lateOutcomeOfAnEarlierAttemptIsIgnored() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimedAt = Date()
            let first = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: claimedAt).first)
            // The first dispatcher loses the database past its lease; another rescues the row and claims it again.
            let expired = claimedAt.addingTimeInterval(61)
            #expect(try await deliveries.rescueExpiredLeases(at: expired) == 1)
            let second = try #require(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: expired).first)
            #expect(second.id == first.id)
            #expect(second.attempts == 2)
            // The first comes back and records its attempt: the row is the second attempt's, so nothing changes.
            try await deliveries.record([
                DeliveryResult(delivery: first, outcome: .retry(at: Date().addingTimeInterval(3600), status: 503, reason: "ServiceUnavailable"))
            ], now: Date())
            let state: PostgresQuery = "SELECT state || ' ' || attempts FROM delivery_outbox WHERE push_type = 'alert' AND state <> 'skipped'"
            #expect(try await db.scalar(state, as: String.self) == "inflight 2")
            try await deliveries.record([DeliveryResult(delivery: second, outcome: .sent(status: 200, apnsID: nil))], now: Date())
            #expect(try await db.scalar(state, as: String.self) == "sent 2")
        }
    }

    @Test("a token-retiring outcome kills the row and retires the token; later pushes to it are skipped at claim")
    func retirement() async throws {
        try await TestDatabase.with { db in
            let (_, id) = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimed = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date())
            try await deliveries.record([DeliveryResult(delivery: claimed[0], outcome: .tokenRetired(status: 410, reason: "Unregistered", since: nil))], now: Date())
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens WHERE retired_at IS NOT NULL", as: Int.self) == 1)
            let log = try #require(try await deliveries.log(orderID: id, in: .default))
            let alert = try #require(log.first { $0.state == .dead })
            #expect(alert.apnsStatus == 410)
            #expect(alert.apnsReason == "Unregistered")
        }
    }

    @Test("pruning deletes finished rows past the retention and keeps pending ones")
    func prune() async throws {
        try await TestDatabase.with { db in
            _ = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            try await db.pool.withConnection { c in
                _ = try await c.query("UPDATE delivery_outbox SET finished_at = now() - interval '4 days' WHERE state = 'skipped'")
            }
            let before = try await db.scalar("SELECT count(*) FROM delivery_outbox", as: Int.self)
            let skipped = try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE state = 'skipped'", as: Int.self)
            #expect(skipped > 0)
            #expect(try await deliveries.prune(olderThan: 72 * 3600, now: Date()) == skipped)
            #expect(try await db.scalar("SELECT count(*) FROM delivery_outbox", as: Int.self) == before - skipped)
            #expect(try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE state = 'pending'", as: Int.self) == 1)
        }
    }

    @Test("a receipt goes with its delivery when the delivery is pruned")
    func aReceiptGoesWithItsDeliveryWhenTheDeliveryIsPruned() async throws {
        try await TestDatabase.with { db in
            let (_, id) = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let claimed = try await deliveries.claim(limit: 10, lease: .seconds(60), apps: nil, now: Date())
            let alert = try #require(claimed.first)
            try await deliveries.record([DeliveryResult(delivery: alert, outcome: .sent(status: 200, apnsID: nil))], now: Date())
            let receipts = ReceiptRepository(pool: db.pool, clock: .system)
            let recording = try await receipts.record(
                [PostedReceipt(deliveryID: alert.id, orderID: id, surface: .notification, at: Date())], customerRef: "c-9", tenant: "default")
            #expect(recording.known == 1 && recording.recorded.count == 1)
            #expect(try await deliveries.log(orderID: id, in: .default)?.first { $0.id == alert.id }?.receiptSurface == .notification)
            // Four days later by the pruner's clock (Citus refuses `finished_at - interval` in an UPDATE, so the row
            // is not moved back instead).
            try await deliveries.prune(olderThan: 72 * 3600, now: Date().addingTimeInterval(4 * 86_400))
            #expect(try await db.scalar("SELECT count(*) FROM delivery_receipts", as: Int.self) == 0)
        }
    }

    @Test("depth counts due pending rows and the age of the oldest, and apart the rows of apps the dispatcher cannot sign for")
    func depth() async throws {
        try await TestDatabase.with { db in
            let (store, _) = try await pendingAlert(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let depth = try await deliveries.depth(apps: nil, now: Date())
            #expect(depth.pending == 1 && depth.unsignable == 0)
            #expect(depth.inflight == 0)
            #expect(depth.oldestPendingAge >= 0)
            let elsewhere = try await deliveries.depth(apps: [TenantApp(tenant: "default", bundleID: "com.other.app")], now: Date())
            #expect(elsewhere.pending == 0 && elsewhere.unsignable == 1)
            // An app is its tenant and bundle id: the same bundle id in another tenant is another app.
            let own = try await deliveries.depth(apps: [TenantApp(tenant: "default", bundleID: store.defaultBundleID)], now: Date())
            #expect(own.pending == 1 && own.unsignable == 0)
            let sameBundleOtherTenant = try await deliveries.depth(apps: [TenantApp(tenant: "harbor", bundleID: store.defaultBundleID)], now: Date())
            #expect(sameBundleOtherTenant.pending == 0 && sameBundleOtherTenant.unsignable == 1)
            #expect(try await deliveries.claim(limit: 10, lease: .seconds(60), apps: [TenantApp(tenant: "harbor", bundleID: store.defaultBundleID)], now: Date()).isEmpty)
        }
    }
}
