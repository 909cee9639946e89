import CremaCore
import CremaPostgres
import CremaService
@testable import CremaStore
import CremaTestSupport
import Foundation
import Testing

/// An order command reads the webhook endpoints that want its events, then names them in its write; an endpoint
/// deleted between the two makes the write's delivery break its foreign key. The command is then run once more, and
/// reads the endpoints anew.
@Suite(.timeLimit(.minutes(2))) struct WebhookEndpointRaceTests {
    /// How many times a command's body ran.
    actor Attempts {
        var count = 0
        func next() -> Int {
            count += 1
            return count
        }
    }

    /// Writes a webhook event of the default tenant and a delivery of it to endpoint `endpoint`, on `transaction`'s connection.
    func deliver(to endpoint: UUID, on transaction: OrderTransaction) async throws {
        let event = UUID()
        _ = try await transaction.connection.pipeline([
            """
            INSERT INTO webhook_events (tenant_id, event_id, event_type, store_id, order_id, customer_ref, body, created_at)
            VALUES ('default', \(event), 'order.changed', 'market-st', NULL, NULL, '{}', now())
            """,
            """
            INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
            VALUES ('default', \(endpoint), \(event), now(), now())
            """,
        ])
    }

    @Test("a command whose write names an endpoint deleted since its read runs once more, and what it wrote the first time is gone")
    func aCommandRacingAnEndpointsDeletionRunsOnceMore() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let attempts = Attempts()
            let ran = try await store.database.command(in: .default, defaultBundleID: nil) { transaction in
                let attempt = await attempts.next()
                // The first time the endpoint is gone (never there); the second time the endpoints read find none.
                if attempt == 1 { try await deliver(to: UUID(), on: transaction) }
                return attempt
            }
            #expect(ran == 2)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events", as: Int.self) == 0)
        }
    }

    @Test("another foreign key broken by a command's write is thrown at once, not run again")
    func anotherForeignKeyIsNotRunAgain() async throws {
        try await TestDatabase.with { db in
            let store = try await StoreFixtures.store(in: db)
            let endpoint = UUID()
            _ = try await db.pool.withConnection { c in
                try await c.query(
                    """
                    INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                    VALUES ('default', \(endpoint), 'https://93.184.215.14/hooks', '{order.changed}', '\\x00', now())
                    """)
            }
            let attempts = Attempts()
            let error = await #expect(throws: StoreError.self) {
                try await store.database.command(in: .default, defaultBundleID: nil) { transaction in
                    _ = await attempts.next()
                    // A delivery to a live endpoint of an event that does not exist: the event's key, not the endpoint's.
                    _ = try await transaction.connection.query(
                        """
                        INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
                        VALUES ('default', \(endpoint), \(UUID()), now(), now())
                        """)
                }
            }
            guard case .database(let failure) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(failure.sqlState == PostgresError.SQLState.foreignKeyViolation)
            #expect(await attempts.count == 1)
        }
    }
}
