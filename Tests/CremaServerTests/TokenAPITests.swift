import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// The app's token routes: registration, rotation, validation, roles, and that a token is never echoed whole.
@Suite struct TokenAPITests {
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "cd", count: 80)

    @Test("an order's Live Activity token is registered once and then rotated in place")
    func activityTokenRotation() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await api.placeOrder()
            let first = try await api.send(.put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(Self.tokenA.uppercased())","environment":"sandbox"}"#)
            #expect(first.status == .created)
            #expect(first.json["token"] as? String == "abababab…")
            #expect(!first.text.contains(Self.tokenA))
            let second = try await api.send(.put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(Self.tokenB)","environment":"production"}"#)
            #expect(second.status == .ok)
            let rows = try await db.pool.withConnection { c in
                try await c.query("SELECT token, environment, retired_at IS NULL AS active FROM push_targets")
            }
            #expect(rows.count == 1)
            #expect(try rows[0].decode("token", as: String.self) == Self.tokenB)
            #expect(try rows[0].decode("environment", as: String.self) == "production")
            let deleted = try await api.send(.delete, "/v1/orders/\(id)/live-activity-token", as: .app)
            #expect(deleted.status == .noContent)
            let again = try await api.send(.delete, "/v1/orders/\(id)/live-activity-token", as: .app)
            #expect(again.errorCode == "unknown_token")
        }
    }

    @Test("a customer token is registered, refreshed, rotated with replaces, and unregistered")
    func customerTokenLifecycle() async throws {
        try await APIHarness.run { api, db in
            let path = "/v1/customers/c-9/tokens/push-to-start/\(Self.tokenA)"
            #expect(try await api.send(.put, path, as: .app, body: #"{"environment":"production"}"#).status == .created)
            #expect(try await api.send(.put, path, as: .app, body: #"{"environment":"production"}"#).status == .ok)
            let rotated = try await api.send(
                .put, "/v1/customers/c-9/tokens/push-to-start/\(Self.tokenB)", as: .app,
                body: #"{"environment":"production","replaces":"\#(Self.tokenA)"}"#)
            #expect(rotated.status == .created)
            #expect(rotated.json["kind"] as? String == "push_to_start")
            let active = try await db.pool.withConnection { c in
                try await c.query("SELECT token FROM customer_tokens WHERE retired_at IS NULL")
            }
            #expect(try active.map { try $0.decode("token", as: String.self) } == [Self.tokenB])
            #expect(try await api.send(.delete, "/v1/customers/c-9/tokens/push-to-start/\(Self.tokenB)", as: .app).status == .noContent)
            #expect(try await api.send(.delete, "/v1/customers/c-9/tokens/push-to-start/\(Self.tokenB)", as: .app).errorCode == "unknown_token")
        }
    }

    @Test("malformed tokens, kinds and environments are refused and nothing is stored",
          arguments: [
            ("/v1/customers/c-9/tokens/alert/xyz", #"{"environment":"production"}"#, "invalid_value"),
            ("/v1/customers/c-9/tokens/alert/\(String(repeating: "a", count: 63))", #"{"environment":"production"}"#, "invalid_value"),
            ("/v1/customers/c-9/tokens/alert/\(String(repeating: "a", count: 402))", #"{"environment":"production"}"#, "invalid_value"),
            ("/v1/customers/c-9/tokens/voip/\(tokenA)", #"{"environment":"production"}"#, "invalid_field"),
            ("/v1/customers/c-9/tokens/alert/\(tokenA)", #"{"environment":"staging"}"#, "invalid_field"),
          ])
    func invalidTokensAreRefused(path: String, body: String, code: String) async throws {
        try await APIHarness.run { api, db in
            let response = try await api.send(.put, path, as: .app, body: body)
            #expect(response.errorCode == code, "\(response.text)")
            let count = try await db.pool.withConnection { c in try await c.query("SELECT count(*) AS n FROM customer_tokens") }
            #expect(try count[0].decode("n", as: Int.self) == 0)
        }
    }

    @Test("only the app role may register tokens", arguments: [Role.pos, .barista, .dashboard])
    func onlyTheAppRegisters(role: Role) async throws {
        try await APIHarness.run { api, _ in
            let response = try await api.send(.put, "/v1/customers/c-9/tokens/alert/\(Self.tokenA)", as: role, body: #"{"environment":"production"}"#)
            #expect(response.status == .forbidden)
        }
    }

    @Test("a token for an unknown order is a 404 and the deliveries of an unknown order too")
    func unknownOrder() async throws {
        try await APIHarness.run { api, _ in
            let id = UUID().uuidString
            let put = try await api.send(.put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(Self.tokenA)","environment":"sandbox"}"#)
            #expect(put.errorCode == "unknown_order")
            #expect(try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .barista).errorCode == "unknown_order")
        }
    }

    @Test("the delivery log explains a change with no tokens as a skip")
    func deliveriesExplainSkips() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            let log = try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .dashboard)
            #expect(log.status == .ok)
            let entries = try #require(log.json["deliveries"] as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(entries.first?["reason_code"] as? String == "no_targets")
            #expect(entries.first?["state"] as? String == "skipped")
            #expect(entries.first?["order_event"] as? String == "placed")
        }
    }
}
