import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaServer
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Testing

/// What the server logs, captured: one access line per request, and never a key or a customer's data.
@Suite(.timeLimit(.minutes(2))) struct LoggingTests {
    @Test("requests are logged without keys or bodies") func requestsAreLoggedWithoutKeysOrBodies() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        try await TestDatabase.with { db in
            let app = CremaApplication.build(try APIHarness.dependencies(pool: db.pool), host: "127.0.0.1", port: 0, logger: logger)
            try await app.test(.router) { client in
                let api = APIClient(client: client)
                try await api.createStore()
                _ = try await api.post("/v1/orders", as: .pos, APIClient.orderBody().replacingOccurrences(of: "Ana", with: "Zoë Secretname"))
                _ = try await api.send(.get, "/v1/orders/\(UUID().uuidString)", rawKey: "Bearer wrong-key-but-still-secret")
                // Another body with the same name: bodies are never logged, whatever the route.
                _ = try await api.send(.put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Zoë Secretname","timezone":"UTC"}"#)
            }
        }
        let lines = handler.entries.map { entry in "\(entry.message) \(entry.metadata)" }
        let access = handler.entries.filter { $0.message == "request" }
        #expect(access.count >= 3)
        #expect(access.contains { $0.metadata["http.route"] == "/v1/orders" && $0.metadata["http.status"] == "201" })
        for secret in Array(APIHarness.keys.values) + ["wrong-key-but-still-secret", "Secretname"] {
            #expect(!lines.contains { $0.contains(secret) }, "a log line contains \(secret)")
        }
    }
}
