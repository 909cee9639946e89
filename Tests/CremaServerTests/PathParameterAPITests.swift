import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Issue #16: every path parameter is percent-decoded in one place, and an encoded slash is refused, in
/// each route family: stores, board, orders, events, preview, deliveries, tokens and customers.
@Suite struct PathParameterAPITests {
    static let token = String(repeating: "ab", count: 32)

    /// `3f2b…` → `%33%66%32%62…`: every character of the id encoded, as a careless client might.
    static func encodedEverything(_ text: String) -> String {
        text.utf8.map { String(format: "%%%02X", $0) }.joined()
    }

    @Test("a store id is decoded before it is checked, and an encoded slash is refused")
    func stores() async throws {
        try await APIHarness.run { api, _ in
            let created = try await api.send(.put, "/v1/stores/market%2Dst", as: .pos, body: #"{"name":"Market St"}"#)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.json["store_id"] as? String == "market-st")
            let slash = try await api.send(.put, "/v1/stores/market%2Fst", as: .pos, body: #"{"name":"Market St"}"#)
            #expect(slash.status == .badRequest && slash.errorCode == "invalid_field")
            #expect(slash.errorDetails["field"] as? String == "store")
            let broken = try await api.send(.put, "/v1/stores/market%2", as: .pos, body: #"{"name":"Market St"}"#)
            #expect(broken.status == .badRequest && broken.errorCode == "invalid_field")
        }
    }

    @Test("a store's board answers for its percent-encoded id")
    func board() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let board = try await api.send(.get, "/v1/stores/%6Darket-st/board", as: .dashboard)
            #expect(board.status == .ok, "\(board.text)")
            #expect(try await api.send(.get, "/v1/stores/market%2fst/board", as: .dashboard).errorCode == "invalid_field")
        }
    }

    @Test("an order, its preview and its deliveries answer for a percent-encoded id")
    func ordersPreviewAndDeliveries() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            let encoded = Self.encodedEverything(id)
            for path in ["/v1/orders/\(encoded)", "/v1/orders/\(encoded)/preview", "/v1/orders/\(encoded)/deliveries"] {
                let response = try await api.send(.get, path, as: .dashboard)
                #expect(response.status == .ok, "\(path): \(response.text)")
                #expect(response.json["id"] as? String ?? response.json["order_id"] as? String == id, "\(path)")
            }
            let slash = try await api.send(.get, "/v1/orders/\(id.prefix(8))%2F\(id.dropFirst(9))", as: .dashboard)
            #expect(slash.status == .badRequest && slash.errorDetails["field"] as? String == "id")
        }
    }

    @Test("an event reaches the order named by a percent-encoded id")
    func events() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            let started = try await api.post(
                "/v1/orders/\(Self.encodedEverything(id))/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            #expect(started.status == .ok, "\(started.text)")
            #expect(started.json["state"] as? String == "preparing")
            let slash = try await api.post("/v1/orders/a%2Fb/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            #expect(slash.status == .badRequest && slash.errorCode == "invalid_field")
        }
    }

    @Test("an order's Live Activity token is registered through a percent-encoded id")
    func tokens() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            let path = "/v1/orders/\(Self.encodedEverything(id))/live-activity-token"
            let put = try await api.send(.put, path, as: .app, body: #"{"token":"\#(Self.token)","environment":"sandbox"}"#)
            #expect(put.status == .created, "\(put.text)")
            #expect(put.json["order_id"] as? String == id)
            #expect(try await api.send(.delete, path, as: .app).status == .noContent)
        }
    }

    @Test("a token registered for caf%C3%A9-7 serves an order for café-7, and c%2F7 is refused")
    func customers() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let put = try await api.send(
                .put, "/v1/customers/caf%C3%A9-7/tokens/alert/\(Self.token)", as: .app, body: #"{"environment":"production"}"#)
            #expect(put.status == .created, "\(put.text)")
            #expect(put.json["customer_ref"] as? String == "café-7")
            let stored = try await db.pool.withConnection { c in try await c.query("SELECT customer_ref FROM customer_tokens") }
            #expect(try stored.map { try $0.decode("customer_ref", as: String.self) } == ["café-7"])

            let body = """
                {"store_id":"market-st","pos_ref":"T-7","customer_ref":"café-7","display_name":"Ana","locale":"es",
                 "items":[{"name":"Oat latte"}],"eta":"\(Date().addingTimeInterval(300).formatted(.iso8601))"}
                """
            let order = try await api.post("/v1/orders", as: .pos, body)
            let id = try #require(order.json["id"] as? String, "\(order.text)")
            let log = try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .dashboard)
            let entries = try #require(log.json["deliveries"] as? [[String: Any]])
            #expect(!entries.contains { $0["reason_code"] as? String == "no_targets" }, "\(log.text)")
            #expect(entries.contains { $0["target_kind"] as? String == "alert" }, "\(log.text)")

            let slash = try await api.send(
                .put, "/v1/customers/c%2F7/tokens/alert/\(Self.token)", as: .app, body: #"{"environment":"production"}"#)
            #expect(slash.status == .badRequest && slash.errorDetails["field"] as? String == "ref", "\(slash.text)")
            #expect(try await api.send(.delete, "/v1/customers/caf%C3%A9-7/tokens/alert/\(Self.token)", as: .app).status == .noContent)
            let count = try await db.pool.withConnection { c in
                try await c.query("SELECT count(*) AS n FROM customer_tokens WHERE customer_ref LIKE '%/%' OR customer_ref LIKE '%\\%%'")
            }
            #expect(try count[0].decode("n", as: Int.self) == 0)
        }
    }
}
