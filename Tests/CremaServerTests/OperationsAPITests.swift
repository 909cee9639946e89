import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaSettings
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

@Suite(.timeLimit(.minutes(2))) struct OperationsAPITests {
    @Test("readiness reports the migrations") func readinessReportsTheMigrations() async throws {
        try await APIHarness.run { api, _ in
            let ready = try await api.send(.get, "/health/ready")
            #expect(ready.status == .ok)
            #expect(ready.json["status"] as? String == "ready")
            #expect((ready.json["migrations"] as? [String: Any])?["pending"] as? [Int] == [])
        }
    }

    @Test("readiness with the database down says it is unreachable rather than listing every migration as pending") func readinessWithTheDatabaseDownSaysItIsUnreachableRatherThanListingEveryMigrationAsPending() async throws {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1 connect_timeout=2 user=x dbname=x", acquireTimeout: .seconds(1)))
        let app = CremaApplication.build(try APIHarness.dependencies(pool: pool), host: "127.0.0.1", port: 0, logger: .init(label: "test"))
        try await app.test(.router) { client in
            let ready = try await APIClient(client: client).send(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.json["status"] as? String == "unavailable")
            #expect(ready.json["database"] as? String == "unreachable")
            let migrations = try #require(ready.json["migrations"] as? [String: Any])
            #expect(migrations["applied"] as? [Int] == [])
            #expect(migrations["pending"] as? [Int] == [])
        }
    }

    @Test("metrics count requests by route template and status") func metricsCountRequestsByRouteTemplateAndStatus() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            _ = try await api.placeOrder()
            _ = try await api.send(.get, "/v1/orders/\(UUID().uuidString)", as: .pos)
            let metrics = try await api.send(.get, "/metrics")
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains(#"crema_http_requests_total{route="/v1/orders",method="POST",status="201"} 1"#))
            #expect(metrics.text.contains(#"crema_http_requests_total{route="/v1/orders/{id}",method="GET",status="404"} 1"#))
            #expect(metrics.text.contains("crema_http_request_duration_seconds_bucket"))
            #expect(metrics.text.contains(#"crema_db_pool_connections{state="max"}"#))
        }
    }

    @Test("the open API document is served") func theOpenAPIDocumentIsServed() async throws {
        try await APIHarness.run { api, _ in
            let document = try await api.send(.get, "/openapi.yaml")
            #expect(document.status == .ok)
            #expect(document.headers[.contentType]?.hasPrefix("application/yaml") == true)
            #expect(document.text.hasPrefix("openapi: 3.1") || document.text.contains("\nopenapi: 3.1"))
        }
    }

    @Test("no key appears in the logs") func noKeyAppearsInTheLogs() async throws {
        // Keys are compared, never logged: the API's description of its keys shows roles and counts only.
        let description = APIHarness.apiKeys.description
        for key in APIHarness.keys.values { #expect(!description.contains(key)) }
        #expect(description.contains("pos: 1"))
    }
}

@Suite struct APIKeysTests {
    @Test("the saved key file parses back including its trailing newline") func theSavedKeyFileParsesBackIncludingItsTrailingNewline() throws {
        let keys = APIKeys.generate()
        let parsed = try APIKeys(parsing: keys.environmentValue + "\n", allowsAdmin: true)
        for role in Role.allCases { #expect(parsed.key(for: role) == keys.key(for: role)) }
    }

    @Test("malformed key lists are refused", arguments: ["pos", "chef:0123456789abcdef", "pos:short", "pos:has space inside!!"])
    func malformedKeyListsAreRefused(_ text: String) {
        #expect(throws: ConfigurationError.self) { try APIKeys(parsing: text) }
    }

    @Test("a presented key maps to its role in the default tenant") func aPresentedKeyMapsToItsRoleInTheDefaultTenant() throws {
        var keys = try APIKeys(parsing: "pos:0123456789abcdef,barista:fedcba9876543210")
        try keys.addAdmin("admin-0123456789abcdef")
        #expect(keys.principal(for: "fedcba9876543210") == APIPrincipal(role: .barista, tenant: "default", holder: "configured:barista-1"))
        #expect(keys.principal(for: "admin-0123456789abcdef") == APIPrincipal(role: .admin, tenant: nil, holder: "configured:admin-2"))
        // Each configured key is counted on its own (request rate, open streams), even two of one role.
        #expect(keys.principal(for: "0123456789abcdef")?.holder != keys.principal(for: "fedcba9876543210")?.holder)
        #expect(keys.principal(for: "0123456789abcdeX") == nil)
        #expect(keys.principal(for: "") == nil)
    }

    @Test("the admin role is refused in crema API keys") func theAdminRoleIsRefusedInCremaAPIKeys() {
        #expect(throws: ConfigurationError.self) { try APIKeys(parsing: "admin:0123456789abcdef") }
    }
}
