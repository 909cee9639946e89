import CremaClock
import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Every POST answers a duplicate sent while the first is still being performed (same Idempotency-Key, same body) the
/// same way: the duplicate waits for the first and replays its answer, with `Idempotent-Replayed: true`, and the
/// request takes effect once. Each test holds the first request inside its work with a lock of its own, sends the
/// duplicate, and lets the first go only once the duplicate is known to wait.
@Suite(.timeLimit(.minutes(2))) struct ConcurrentDuplicateTests {
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    @Test("a duplicate order waits for the first and replays it") func aDuplicateOrderWaitsForTheFirstAndReplaysIt() async throws {
        try await Self.run { api, db, _ in
            try await api.createStore()
            let body = APIClient.orderBody()
            let (first, second) = try await Self.holding("SELECT 1 FROM stores WHERE tenant_id = 'default' AND store_id = 'market-st' FOR UPDATE", in: db) {
                try await api.send(.post, "/v1/orders", as: .pos, idempotencyKey: "dup-order", body: body)
            } duplicate: {
                let duplicate = Task { try await api.send(.post, "/v1/orders", as: .pos, idempotencyKey: "dup-order", body: body) }
                // The duplicate waits on the key's row, which the first claimed in its transaction.
                try await db.untilWaiting(2)
                return duplicate
            }
            Self.expectReplay(of: first, by: second, status: .created)
            #expect(first.json["id"] as? String == second.json["id"] as? String)
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 1)
        }
    }

    @Test("a duplicate webhook registration waits for the first and replays it") func aDuplicateWebhookRegistrationWaitsForTheFirstAndReplaysIt() async throws {
        try await Self.run { api, db, waits in
            let body = #"{"url":"https://93.184.215.14/hooks/crema","events":["order.changed"]}"#
            let (first, second) = try await Self.holding("LOCK TABLE webhook_endpoints IN SHARE MODE", in: db) {
                try await api.send(.post, "/v1/webhooks", as: .pos, idempotencyKey: "dup-hook", body: body)
            } duplicate: {
                let duplicate = Task { try await api.send(.post, "/v1/webhooks", as: .pos, idempotencyKey: "dup-hook", body: body) }
                // The duplicate waits in this process for the request holding the key.
                #expect(await waits.next() == IdempotencyGate.longestWait)
                return duplicate
            }
            Self.expectReplay(of: first, by: second, status: .created)
            #expect(first.json["id"] as? String == second.json["id"] as? String)
            // The secret is shown once: the replay answers the endpoint without it.
            #expect(first.json["secret"] is String && second.json["secret"] == nil)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_endpoints", as: Int.self) == 1)
        }
    }

    @Test("a duplicate administrative POST waits for the first and replays it") func aDuplicateAdministrativePOSTWaitsForTheFirstAndReplaysIt() async throws {
        try await Self.run { api, db, waits in
            let issue = { @Sendable in
                try await api.send(
                    .post, "/v1/admin/tenants/default/api-keys", idempotencyKey: "dup-key", body: #"{"role":"pos"}"#,
                    rawKey: "Bearer \(APIHarness.adminKey)")
            }
            let (first, second) = try await Self.holding("LOCK TABLE api_keys IN SHARE MODE", in: db) {
                try await issue()
            } duplicate: {
                let duplicate = Task { try await issue() }
                #expect(await waits.next() == IdempotencyGate.longestWait)
                return duplicate
            }
            Self.expectReplay(of: first, by: second, status: .created)
            #expect(first.json["id"] as? String == second.json["id"] as? String)
            #expect(first.json["key"] is String && second.json["key"] == nil)
            #expect(try await db.scalar("SELECT count(*) FROM api_keys", as: Int.self) == 1)
        }
    }

    // MARK: - Helpers

    /// The first answer is the request performed; the second, its replay: same status and answer but what is shown once.
    static func expectReplay(of first: APIResponse, by second: APIResponse, status: HTTPResponse.Status) {
        #expect(first.status == status && second.status == status, "\(first.text) / \(second.text)")
        #expect(first.headers[replayed] == nil)
        #expect(second.headers[replayed] == "true")
    }

    /// Holds `lock` in a transaction of its own while `request` is sent, so that the request stops inside its work,
    /// waiting for the lock; then starts the `duplicate`, which returns once the duplicate is known to wait, and ends the
    /// transaction, letting the first request finish.
    static func holding(
        _ lock: PostgresQuery, in db: TestDatabase, _ request: @escaping @Sendable () async throws -> APIResponse,
        duplicate: @Sendable () async throws -> Task<APIResponse, any Error>
    ) async throws -> (APIResponse, APIResponse) {
        let (first, second) = try await db.pool.withTransaction { holder in
            _ = try await holder.query(lock)
            let first = Task { try await request() }
            try await db.untilWaiting(1)
            return (first, try await duplicate())
        }
        return (try await first.value, try await second.value)
    }


    /// The API on a fresh database, its administrative and webhook POSTs run through a gate whose waits are reported
    /// to the test (`GateWaits`) instead of taking time.
    static func run(
        _ label: String = #function, _ body: @escaping @Sendable (APIClient, TestDatabase, GateWaits) async throws -> Void
    ) async throws {
        try await TestDatabase.with(label) { db in
            var dependencies = try APIHarness.dependencies(pool: db.pool)
            let waits = GateWaits()
            let database = dependencies.service.database
            let gate = IdempotencyGate(repository: database.idempotency, clock: .sleeping(waits.sleep))
            let masterKey = try MasterKey(base64: APIHarness.masterKey)
            dependencies.admin = AdminService(database: database, masterKey: masterKey, idempotency: gate, clock: .system)
            dependencies.webhooks = WebhookService(
                database: database, limits: dependencies.service.limits, masterKey: masterKey, allowsPrivateAddresses: false,
                resolve: { _ in [] }, idempotency: gate, clock: .system)
            let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: .init(label: "test"))
            try await app.test(.router) { client in try await body(APIClient(client: client), db, waits) }
        }
    }
}
