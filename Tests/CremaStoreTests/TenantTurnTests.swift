import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
@testable import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// Registrations that count before they insert take turns on a row of their tenant (`TenantTurn`, migration 019), not
/// on an advisory lock. Each test holds a turn in a transaction of its own, as a first registration would, and shows
/// that a second registration waits for it and then counts what the first inserted: without the turn the second would
/// not wait (the test would never see it waiting) and would take the place the first took.
@Suite(.timeLimit(.minutes(2))) struct TenantTurnTests {
    static let token = String(repeating: "ab", count: 32)

    @Test("a customer's token registration waits for the turn another registration holds, then counts its token and is refused at the limit")
    func tokenRegistrationWaitsForTheTurn() async throws {
        try await TestDatabase.with { db in
            let tokens = TokenRepository(pool: db.pool, clock: .system)
            let turn = TenantTurn.customerTokens(tenant: "default", customerRef: "c-9", kind: .alert)
            let second = try await db.pool.withTransaction { holder in
                _ = try await holder.query(turn.take)
                let second = Task {
                    try await tokens.putCustomerToken(
                        customerRef: "c-9", tenant: "default", kind: .alert, token: String(repeating: "cd", count: 32), environment: .production,
                        bundleID: nil, replaces: nil, limit: 1)
                }
                try await db.untilWaiting(1)
                _ = try await holder.query(
                    """
                    INSERT INTO customer_tokens (tenant_id, customer_ref, kind, token, environment)
                    VALUES ('default', 'c-9', 'alert', \(Self.token), 'production')
                    """)
                _ = try await holder.query(turn.end)
                return second
            }
            await #expect(throws: StoreError.limitReached(.tokensPerCustomer, limit: 1)) { try await second.value }
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens", as: Int.self) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM tenant_turns", as: Int.self) == 0, "no turn outlives its transaction")
        }
    }

    @Test("another customer's token registration does not wait for that turn")
    func otherCustomersDoNotWait() async throws {
        try await TestDatabase.with { db in
            let tokens = TokenRepository(pool: db.pool, clock: .system)
            try await db.pool.withTransaction { holder in
                _ = try await holder.query(TenantTurn.customerTokens(tenant: "default", customerRef: "c-9", kind: .alert).take)
                for (customer, kind) in [("c-10", PushTargetKind.alert), ("c-9", .widget)] {
                    let registered = try await tokens.putCustomerToken(
                        customerRef: customer, tenant: "default", kind: kind, token: Self.token, environment: .production, bundleID: nil,
                        replaces: nil, limit: 1)
                    #expect(registered.created)
                }
            }
        }
    }

    @Test("a webhook endpoint's registration waits for the turn another registration of its tenant holds, then counts that endpoint and is refused at the limit")
    func webhookRegistrationWaitsForTheTurn() async throws {
        try await TestDatabase.with { db in
            let webhooks = WebhookRepository(pool: db.pool)
            let turn = TenantTurn.webhookEndpoints(tenant: "default")
            let endpoint = StoredWebhookEndpoint(
                tenant: "default", id: UUID(), url: "https://hooks.example/crema", events: [.orderChanged], stores: nil,
                sealedSecret: [1, 2, 3], createdAt: Date())
            let second = try await db.pool.withTransaction { holder in
                _ = try await holder.query(turn.take)
                let second = Task { try await webhooks.insert(endpoint, limit: 1) }
                try await db.untilWaiting(1)
                _ = try await holder.query(
                    """
                    INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                    VALUES ('default', \(UUID()), 'https://hooks.example/first', ARRAY['order.changed'], '\\x00'::bytea, \(Date()))
                    """)
                _ = try await holder.query(turn.end)
                return second
            }
            await #expect(throws: StoreError.limitReached(.webhooks, limit: 1)) { try await second.value }
            #expect(try await db.scalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)
        }
    }
}
