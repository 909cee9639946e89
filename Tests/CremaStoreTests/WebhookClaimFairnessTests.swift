import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// How the webhook claim shares the sending slots between tenants (docs/limits.md): a tenant whose receivers never
/// answer holds at most its share, and another tenant's deliveries are claimed beside its own.
@Suite struct WebhookClaimFairnessTests {
    /// `count` due deliveries for each of `endpoints` endpoints of `tenant`.
    static func backlog(_ db: TestDatabase, tenant: String, endpoints: Int, count: Int, at: Date) async throws {
        _ = try await db.scalar(
            """
            WITH t AS (INSERT INTO tenants (tenant_id, name) VALUES (\(tenant), \(tenant)) ON CONFLICT DO NOTHING RETURNING 1),
            e AS (
                INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                SELECT \(tenant), gen_random_uuid(), 'https://93.184.215.14/' || n, ARRAY['order.changed'], '\\x00', \(at)
                FROM generate_series(1, \(endpoints)) n
                RETURNING tenant_id, endpoint_id
            ), w AS (
                INSERT INTO webhook_events (tenant_id, event_id, event_type, body, created_at)
                SELECT \(tenant), gen_random_uuid(), 'order.changed', '{}', \(at) FROM generate_series(1, \(count))
                RETURNING tenant_id, event_id
            ), d AS (
                INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
                SELECT e.tenant_id, e.endpoint_id, w.event_id, \(at), \(at) FROM e CROSS JOIN w
                RETURNING 1
            )
            SELECT count(*) FROM d
            """, as: Int.self)
    }

    @Test("a tenant with a deep backlog takes at most its share, and the other tenant's deliveries go out beside it")
    func eachTenantUpToItsShare() async throws {
        try await TestDatabase.with { db in
            let now = Date()
            try await Self.backlog(db, tenant: "tarpit", endpoints: 5, count: 20, at: now.addingTimeInterval(-60))
            try await Self.backlog(db, tenant: "ordinary", endpoints: 1, count: 3, at: now)
            let store = WebhookRepository(pool: db.pool)
            let first = try await store.claim(limit: 64, perEndpoint: 8, perTenant: 10, lease: 30, now: now)
            #expect(first.filter { $0.tenant == "tarpit" }.count == 10)
            #expect(first.filter { $0.tenant == "ordinary" }.count == 3)
            // Its share is in flight: nothing more for the tarpit until one of them ends, whatever room there is.
            #expect(try await store.claim(limit: 64, perEndpoint: 8, perTenant: 10, lease: 30, now: now).isEmpty)
        }
    }

    @Test("when the room is short, the tenants take turns instead of the oldest backlog taking it all")
    func tenantsTakeTurns() async throws {
        try await TestDatabase.with { db in
            let now = Date()
            try await Self.backlog(db, tenant: "tarpit", endpoints: 4, count: 10, at: now.addingTimeInterval(-60))
            try await Self.backlog(db, tenant: "ordinary", endpoints: 1, count: 2, at: now)
            let claimed = try await WebhookRepository(pool: db.pool).claim(limit: 4, perEndpoint: 8, perTenant: 32, lease: 30, now: now)
            #expect(claimed.filter { $0.tenant == "ordinary" }.count == 2)
            #expect(claimed.filter { $0.tenant == "tarpit" }.count == 2)
        }
    }
}
