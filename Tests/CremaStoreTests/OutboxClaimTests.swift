import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaService
import CremaTestSupport
import Foundation
import Testing

@testable import CremaStore

/// The claim as migration 017 made it: one tenant's rows at a time, rewritten in place (HOT) so that claiming writes no
/// index entry, and the survey that tells a dispatcher which tenants have due work.
@Suite struct OutboxClaimTests {
    /// Three alert pushes due for the default tenant's customer c-9.
    static func threeDueAlerts(_ db: TestDatabase) async throws {
        let store = try await StoreFixtures.store(in: db)
        _ = try await store.database.tokens.putCustomerToken(
            customerRef: "c-9", tenant: "default", kind: .alert, token: String(repeating: "ab", count: 32), environment: .production,
            bundleID: nil, replaces: nil, limit: 20)
        for key in ["a", "b", "c"] {
            let placed = try await store.place(StoreFixtures.placement(posRef: "T-" + key), in: .default, role: .pos, request: StoreFixtures.request("p-" + key))
            _ = try await store.apply(
                .ready(pickupPoint: "counter"), to: try StoreFixtures.orderID(placed), in: .default, expectedVersion: nil, role: .barista,
                request: StoreFixtures.request("r-" + key, scope: "barista"))
        }
    }

    @Test("a claim rewrites its rows in place (HOT updates), writing no index entry")
    func theClaimIsAHOTUpdate() async throws {
        try await TestDatabase.with { db in
            try await Self.threeDueAlerts(db)
            let (claimed, counts) = try await db.pool.withConnection { connection in
                try await connection.simpleQuery("BEGIN")
                let claimed = try await connection.query(
                    DeliveryRepository.claimable(tenant: "default", limit: 10, seconds: 60, apps: nil, now: Date().addingTimeInterval(1), leaseID: UUID()))
                // This transaction's own counters: exact, with no wait for the statistics collector.
                let counts = try await TransactionUpdates.read("delivery_outbox", tenant: "default", on: connection)
                try await connection.simpleQuery("ROLLBACK")
                return (claimed.count, counts)
            }
            #expect(claimed == 3)
            #expect(counts == TransactionUpdates(updated: 3, hot: 3), "claim updates: \(counts)")
        }
    }

    @Test("a claim for one tenant takes none of another tenant's rows, and the survey names only tenants with work due")
    func claimsArePerTenant() async throws {
        try await TestDatabase.with { db in
            try await Self.threeDueAlerts(db)
            let deliveries = DeliveryRepository(pool: db.pool)
            let now = Date().addingTimeInterval(1)
            #expect(try await deliveries.tenantsWithDueWork(apps: nil, now: now) == ["default"])
            // Not yet due by the dispatcher's clock: nobody has work.
            #expect(try await deliveries.tenantsWithDueWork(apps: nil, now: now.addingTimeInterval(-3600)).isEmpty)
            // Only apps of another tenant signable here: nobody has work this dispatcher can send.
            #expect(try await deliveries.tenantsWithDueWork(apps: [TenantApp(tenant: "harbor", bundleID: "cafe.crema.test")], now: now).isEmpty)
            #expect(try await deliveries.claim(for: "harbor", limit: 10, lease: .seconds(60), apps: nil, now: now).isEmpty)
            #expect(try await deliveries.claim(for: "default", limit: 2, lease: .seconds(60), apps: nil, now: now).count == 2)
            #expect(try await deliveries.claim(for: "default", limit: 2, lease: .seconds(60), apps: nil, now: now).count == 1)
            // Everything is in flight: no tenant has work due.
            #expect(try await deliveries.tenantsWithDueWork(apps: nil, now: now).isEmpty)
        }
    }

    @Test("the claim runs on the plan its connection prepared once, never on one made afresh for the call's values, except on Citus")
    func theClaimRunsOnThePlanItsConnectionPreparedOnce() async throws {
        try await TestDatabase.with { db in
            try await Self.threeDueAlerts(db)
            // One connection, so the claims and the look at its prepared statements meet on it.
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let deliveries = DeliveryRepository(pool: pool)
            var claimed = 0
            for _ in 0..<8 {
                claimed += try await deliveries.claim(for: "default", limit: 1, lease: .seconds(60), apps: nil, now: Date().addingTimeInterval(1)).count
            }
            let (plans, citus) = try await pool.withConnection { connection in
                let plans = try await connection.query(
                    """
                    SELECT generic_plans, custom_plans FROM pg_prepared_statements
                    WHERE statement LIKE 'WITH c AS (%' AND statement LIKE '%SET state = ''inflight''%'
                    """
                ).map { (generic: try $0.decode("generic_plans", as: Int.self), custom: try $0.decode("custom_plans", as: Int.self)) }
                return (plans, try await CitusDistribution().isInstalled(on: connection))
            }
            await pool.close()
            #expect(claimed == 3)
            if citus {
                // Left to PostgreSQL's own choice there (a generic plan of a distributed statement is refused): at least the
                // first five calls are planned for their values.
                #expect(plans.count == 1 && (plans.first?.custom ?? 0) >= 5, "\(plans)")
            } else {
                // Left to itself PostgreSQL plans the first five calls for their values (and, with more rows due, every call).
                #expect(plans.count == 1 && plans.first?.generic == 8 && plans.first?.custom == 0, "\(plans)")
            }
        }
    }
}
