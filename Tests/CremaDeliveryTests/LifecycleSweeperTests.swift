import CremaAPNsProtocol
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

/// The lifecycle sweep on a real database with an injected clock (docs/data-lifecycle.md): overdue orders are closed
/// once, by the system, through the ordinary event path; personal data goes after the retention period. Time is moved
/// by hand, never waited for.
@Suite(.serialized, .timeLimit(.minutes(2))) struct LifecycleSweeperTests {
    static let logger = Logger(label: "test")

    /// An order service and a sweeper on `db`, both reading `clock`.
    static func sweeper(
        _ db: TestDatabase, clock: TestClock, retentionDays: Int = 30, registry: PrometheusCollectorRegistry = .init()
    ) -> (OrderService, LifecycleSweeper) {
        let service = OrderService(database: CremaDatabase(pool: db.pool, clock: clock.crema), clock: clock.crema)
        return (service, LifecycleSweeper(service: service, retentionDays: retentionDays, clock: clock.crema, registry: registry, logger: logger))
    }

    @Test("A ready order left past its store's limit is closed exactly once by the system, even with two processes sweeping at once")
    func readyOrderIsClosedOnce() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let (service, first) = Self.sweeper(db, clock: clock)
            let (_, second) = Self.sweeper(db, clock: clock)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default", readyExpiryMinutes: 30)
            let id = try await OrderServiceFixture.place(service, at: clock)
            try await OrderServiceFixture.apply(service, .started(barista: "Sam"), to: id)
            try await OrderServiceFixture.apply(service, .ready(pickupPoint: nil), to: id)

            await clock.advance(29 * 60)
            #expect(try await first.sweep().expired == 0)

            await clock.advance(2 * 60)
            async let a = first.sweep()
            async let b = second.sweep()
            let (sweepA, sweepB) = try await (a, b)
            #expect(sweepA.expired + sweepB.expired == 1)

            let detail = try #require(try await service.database.orders.order(id: id, in: .default))
            #expect(detail.order.state == .canceled)
            #expect(detail.order.cancelReason == nil)
            #expect(detail.events.filter { $0.type == .expired }.count == 1)
            let expired = try #require(detail.events.last)
            #expect(expired.type == .expired)
            #expect(expired.role == .system)
            #expect(expired.data == ["reason": "not_collected"])
            #expect(abs(expired.occurredAt.timeIntervalSince(clock.now)) < 0.001)
            #expect(try await first.sweep().expired == 0)
        }
    }

    @Test("A queued order never started is closed as never_started after the queued limit; an order being made is left alone")
    func queuedOrderExpiresPreparingDoesNot() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let registry = PrometheusCollectorRegistry()
            let (service, sweeper) = Self.sweeper(db, clock: clock, registry: registry)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let queued = try await OrderServiceFixture.place(service, at: clock)
            let preparing = try await OrderServiceFixture.place(service, at: clock)
            try await OrderServiceFixture.apply(service, .started(barista: "Sam"), to: preparing)

            await clock.advance(4 * 3600 - 1)
            #expect(try await sweeper.sweep().expired == 0)
            // A second past the limit: the database keeps microseconds, so the exact instant is the core's to test.
            await clock.advance(2)
            #expect(try await sweeper.sweep().expired == 1)

            let closed = try #require(try await service.database.orders.order(id: queued, in: .default))
            #expect(closed.order.state == .canceled)
            #expect(closed.events.last?.data == ["reason": "never_started"])
            #expect(try await service.database.orders.order(id: preparing, in: .default)?.order.state == .preparing)
            #expect(registry.emitToString().contains(#"crema_orders_expired_total{reason="never_started"} 1"#))
        }
    }

    @Test("Retention removes personal data once N days have passed since an order ended, keeping counts and timings, and leaves newer orders alone")
    func retentionScrubsOldOrdersOnly() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let registry = PrometheusCollectorRegistry()
            let (service, sweeper) = Self.sweeper(db, clock: clock, retentionDays: 30, registry: registry)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let old = try await OrderServiceFixture.place(service, customer: "c-old", name: "Olga Oldorder", at: clock)
            try await OrderServiceFixture.apply(service, .delayed(eta: clock.now.addingTimeInterval(900), reason: "Olga wanted extra foam"), to: old, as: .pos)
            try await OrderServiceFixture.apply(service, .canceled(reason: "Olga Oldorder left"), to: old, as: .pos)
            // A token the customer registered and APNs retired on the day the order ended.
            _ = try await db.scalar(
                """
                WITH r AS (INSERT INTO customer_tokens (tenant_id, customer_ref, kind, token, environment, retired_at)
                           VALUES ('default', 'c-old', 'alert', \(String(repeating: "0a", count: 32)), 'production', \(clock.now)) RETURNING 1)
                SELECT count(*) FROM r
                """, as: Int.self)

            await clock.advance(20 * 86_400)
            let recent = try await OrderServiceFixture.place(service, customer: "c-new", name: "Nina Neworder", at: clock)
            try await OrderServiceFixture.apply(service, .ready(pickupPoint: nil), to: recent)
            try await OrderServiceFixture.apply(service, .pickedUp, to: recent, as: .pos)
            let eventsBefore = try await db.scalar("SELECT count(*) FROM order_events", as: Int.self)

            await clock.advance(10 * 86_400 + 1)
            #expect(try await sweeper.sweep().scrubbed == 1)

            let scrubbed = try #require(try await service.database.orders.order(id: old, in: .default))
            #expect(scrubbed.order.customerRef == nil)
            #expect(scrubbed.order.displayName == "")
            #expect(scrubbed.order.delayReason == nil && scrubbed.order.cancelReason == nil)
            #expect(scrubbed.order.state == .canceled && scrubbed.order.version == 3 && scrubbed.order.items.first?.quantity == 2)
            #expect(scrubbed.events.map(\.type) == [.placed, .delayed, .canceled])
            for needle in ["c-old", "Olga"] {
                #expect(try await db.scalar("SELECT count(*) FROM order_events WHERE strpos(data::text, \(needle)) > 0", as: Int.self) == 0)
                #expect(try await db.scalar("SELECT count(*) FROM orders WHERE strpos(projection::text, \(needle)) > 0 OR customer_ref = \(needle)", as: Int.self) == 0)
                #expect(try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE strpos(body, \(needle)) > 0", as: Int.self) == 0)
            }
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens", as: Int.self) == 0)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == eventsBefore)
            let kept = try #require(try await service.database.orders.order(id: recent, in: .default))
            #expect(kept.order.customerRef == "c-new" && kept.order.displayName == "Nina Neworder")

            #expect(try await sweeper.sweep().scrubbed == 0)
            #expect(registry.emitToString().contains("crema_orders_personal_data_removed_total 1"))
        }
    }

    @Test("An open order of an erased customer that later ends with a free-text reason loses that reason to retention too")
    func textAfterAnErasureIsRemovedByRetention() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let (service, sweeper) = Self.sweeper(db, clock: clock, retentionDays: 30)
            _ = try await service.database.stores.put(id: "market-st", name: "Market St", timezone: "UTC", tenant: "default")
            let id = try await OrderServiceFixture.place(service, customer: "c-gone", name: "Gina Gone", at: clock)
            #expect(try await service.database.lifecycle.erase(customerRef: "c-gone", tenant: "default", now: clock.now)?.orders == 1)
            try await OrderServiceFixture.apply(service, .canceled(reason: "Gina called to cancel"), to: id, as: .pos)
            #expect(try await service.database.orders.order(id: id, in: .default)?.order.cancelReason == "Gina called to cancel")

            await clock.advance(30 * 86_400 + 60)
            #expect(try await sweeper.sweep().scrubbed == 1)
            let order = try #require(try await service.database.orders.order(id: id, in: .default))
            #expect(order.order.cancelReason == nil)
            #expect(try await db.scalar("SELECT count(*) FROM order_events WHERE strpos(data::text, 'Gina') > 0", as: Int.self) == 0)
        }
    }

    @Test("An order whose close fails is logged, counted and set aside: the other overdue orders expire and retention runs")
    func aPoisonedOrderStopsNothing() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let registry = PrometheusCollectorRegistry()
            let (service, sweeper) = Self.sweeper(db, clock: clock, retentionDays: 1, registry: registry)
            _ = try await service.database.stores.put(
                id: "market-st", name: "Market St", timezone: "UTC", tenant: "default", queuedExpiryMinutes: 60)
            let ended = try await OrderServiceFixture.place(service, customer: "c-old", name: "Olga Oldorder", at: clock)
            try await OrderServiceFixture.apply(service, .canceled(reason: "left"), to: ended, as: .pos)
            await clock.advance(2 * 86_400)
            // Oldest first: the poisoned order is at the head of every scan, as in the incident.
            let poisoned = try await OrderServiceFixture.place(service, customer: "c-1", name: "Pia", at: clock)
            await clock.advance(1)
            let healthy = try await OrderServiceFixture.place(service, customer: "c-2", name: "Hugo", at: clock)
            // A real failure of the database for this one order's close: a constraint its expiry event breaks. A
            // constraint rather than a trigger, because Citus refuses a new trigger on a distributed table.
            try await db.pool.withConnection { c in
                _ = try await c.query(
                    PostgresQuery(
                        unsafeSQL: """
                            ALTER TABLE order_events ADD CONSTRAINT poisoned
                            CHECK (order_id <> '\(poisoned.uuidString.lowercased())' OR event_type <> 'expired')
                            """))
            }

            await clock.advance(61 * 60)
            let sweep = try await sweeper.sweep()
            #expect(sweep.expired == 1)
            #expect(sweep.scrubbed == 1)
            #expect(try await service.database.orders.order(id: healthy, in: .default)?.order.state == .canceled)
            #expect(try await service.database.orders.order(id: poisoned, in: .default)?.order.state == .queued)
            #expect(registry.emitToString().contains(#"crema_lifecycle_failures_total{pass="expiry"} 1"#))

            // Set aside for a sweep's interval: the next sweep does not try it again at once.
            #expect(try await sweeper.sweep().expired == 0)
            #expect(registry.emitToString().contains(#"crema_lifecycle_failures_total{pass="expiry"} 1"#))
            // Tried again once the wait is over; it closes once whatever poisoned it is gone.
            try await db.pool.withConnection { c in _ = try await c.query("ALTER TABLE order_events DROP CONSTRAINT poisoned") }
            await clock.advance(31)
            #expect(try await sweeper.sweep().expired == 1)
            #expect(try await service.database.orders.order(id: poisoned, in: .default)?.order.state == .canceled)
        }
    }
}
