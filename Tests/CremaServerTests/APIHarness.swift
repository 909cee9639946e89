import CremaAPNsProtocol
import CremaClock
import CremaCore
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaService
import CremaSettings
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// Runs the real application (`CremaApplication.build`) against a fresh test database and gives tests a
/// small client that speaks the API's JSON with a key per role.
struct APIHarness {
    static let keys: [Role: String] = [
        .pos: "pos-test-key-0000000001", .barista: "barista-test-key-00001", .dashboard: "dashboard-test-key-0001",
        .app: "app-test-key-0000000001",
    ]
    /// The bootstrap admin key (`CREMA_ADMIN_KEY`).
    static let adminKey = "admin-test-key-00000001"
    /// `CREMA_MASTER_KEY` of the harness: 32 fixed bytes, base64.
    static let masterKey = Data(repeating: 7, count: 32).base64EncodedString()
    static var apiKeys: APIKeys {
        var keys = APIKeys(keys.map { ($0.key, $0.value) })
        try! keys.addAdmin(adminKey)
        return keys
    }

    /// The process a test serves, built by the composition root as `crema serve` builds it, with the harness's
    /// master key and no background worker unless asked: `conninfo` nil hears only this process's changes.
    static func process(
        pool: PostgresPool, conninfo: String? = nil, workers: CremaProcess.Workers = [], clock: CremaClock = .system,
        limits: TenantLimits = .defaults, adjusting adjust: (inout CremaProcess.Setup) -> Void = { _ in }
    ) throws -> CremaProcess {
        var setup = CremaProcess.Setup(pool: pool, conninfo: conninfo, workers: workers, logger: Logger(label: "test"))
        setup.masterKey = try MasterKey(base64: masterKey)
        setup.clock = clock
        setup.limits = limits
        adjust(&setup)
        return try CremaProcess(setup)
    }

    /// The HTTP side over `process`, with the harness's keys; `build` runs the process's services too.
    static func dependencies(_ process: CremaProcess) -> CremaApplication.Dependencies {
        var dependencies = CremaApplication.Dependencies(
            health: process.health, service: process.service, admin: process.admin, webhooks: process.webhooks, broadcasts: process.broadcasts,
            keys: apiKeys, registry: process.registry)
        dependencies.processServices = process.services
        return dependencies
    }

    /// `dependencies(process(pool:conninfo:))`: the common case.
    static func dependencies(pool: PostgresPool, conninfo: String? = nil) throws -> CremaApplication.Dependencies {
        dependencies(try process(pool: pool, conninfo: conninfo))
    }

    /// Runs `body` with a client of an application on a fresh database; customer tokens are those of
    /// `CustomerTokenFixtures` (an HS256 secret, a fixed clock).
    /// `masterKey` false runs it as a deployment without `CREMA_MASTER_KEY`.
    static func run(
        _ label: String = #function, masterKey: Bool = true, _ body: @escaping @Sendable (APIClient, TestDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.with(label) { db in
            var dependencies = dependencies(try process(pool: db.pool, adjusting: { if !masterKey { $0.masterKey = nil } }))
            dependencies.customerTokens = try await CustomerTokenFixtures.verifier(CustomerTokenFixtures.harnessKeys)
            let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: .init(label: "test"))
            try await app.test(.router) { client in try await body(APIClient(client: client), db) }
        }
    }
}

/// A response with its body decoded as JSON.
struct APIResponse {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var text: String
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
    var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
    var errorDetails: [String: Any] { ((json["error"] as? [String: Any])?["details"] as? [String: Any]) ?? [:] }
}

struct APIClient: Sendable {
    /// One request as sent, its answer as received: through the router, or over TCP to a live server.
    let execute: @Sendable (_ uri: String, _ method: HTTPRequest.Method, _ headers: HTTPFields, _ body: ByteBuffer?) async throws -> APIResponse

    init(execute: @escaping @Sendable (String, HTTPRequest.Method, HTTPFields, ByteBuffer?) async throws -> APIResponse) {
        self.execute = execute
    }

    /// Through HummingbirdTesting's client (the `.router` mode: no sockets).
    init(client: any TestClientProtocol) {
        execute = { uri, method, headers, body in
            let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
            return APIResponse(status: response.status, headers: response.headers, text: String(buffer: response.body))
        }
    }

    /// A request with exactly these header fields.
    func request(_ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields) async throws -> APIResponse {
        try await execute(uri, method, headers, nil)
    }

    func send(
        _ method: HTTPRequest.Method, _ uri: String, as role: Role? = nil, key: String? = nil, idempotencyKey: String? = nil,
        body: String? = nil, rawKey: String? = nil
    ) async throws -> APIResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let rawKey {
            headers[.authorization] = rawKey
        } else if let role {
            headers[.authorization] = "Bearer \(APIHarness.keys[role]!)"
        }
        if let idempotencyKey { headers[HTTPField.Name("Idempotency-Key")!] = idempotencyKey }
        return try await execute(uri, method, headers, body.map { ByteBuffer(string: $0) })
    }

    /// POST with a fresh idempotency key unless one is given.
    func post(_ uri: String, as role: Role, key: String = UUID().uuidString, _ body: String) async throws -> APIResponse {
        try await send(.post, uri, as: role, idempotencyKey: key, body: body)
    }

    func createStore(_ id: String = "market-st") async throws {
        _ = try await send(.put, "/v1/stores/\(id)", as: .pos, body: #"{"name":"Market St","timezone":"America/Los_Angeles"}"#)
    }

    /// Places an order and returns its id.
    func placeOrder(store: String = "market-st", key: String = UUID().uuidString) async throws -> String {
        let response = try await post("/v1/orders", as: .pos, key: key, Self.orderBody(store: store))
        guard let id = response.json["id"] as? String else { throw HarnessError.unexpected(response.text) }
        return id
    }

    static func orderBody(store: String = "market-st", eta: Date = Date().addingTimeInterval(300)) -> String {
        """
        {"store_id":"\(store)","pos_ref":"T-1001","customer_ref":"c-9","display_name":"Ana","locale":"es",
         "items":[{"name":"Oat latte","size":"grande","quantity":1,"modifiers":["extra shot"]}],
         "eta":"\(eta.formatted(.iso8601))"}
        """
    }

    enum HarnessError: Error { case unexpected(String) }
}
