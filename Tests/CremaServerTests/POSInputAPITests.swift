import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Issue #16: inputs a real POS sends, answered as the design and the error texts promise.
@Suite struct POSInputAPITests {
    static func body(locale: String) -> String {
        APIClient.orderBody().replacingOccurrences(of: #""locale":"es""#, with: #""locale":"\#(locale)""#)
    }

    @Test("an empty, unknown or region-tagged locale places the order in the nearest supported language",
          arguments: [("", "en", "We've got your order"), ("xx-YY", "xx-YY", "We've got your order"), ("es-MX", "es-MX", "Recibimos tu pedido"),
                      ("ja_JP", "ja-JP", "ご注文を承りました"), ("EN", "en", "We've got your order")])
    func localesFallBack(_ sample: (String, String, String)) async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let placed = try await api.post("/v1/orders", as: .pos, Self.body(locale: sample.0))
            #expect(placed.status == .created, "\(placed.text)")
            #expect(placed.json["locale"] as? String == sample.1)
            let id = try #require(placed.json["id"] as? String)
            let preview = try await api.send(.get, "/v1/orders/\(id)/preview", as: .pos)
            #expect(preview.json["locale"] as? String == sample.1)
            // The Lock Screen's title of a queued order (a placed order alerts nobody, so no alert body is shown).
            #expect(preview.text.contains(sample.2), "\(preview.text)")
        }
    }

    @Test("an Idempotency-Key may hold spaces: 1–255 characters from 0x20 to 0x7E",
          arguments: ["order 1001 retry", "a", String(repeating: "k", count: 255), "~!@#$%^&*() _+{}|:<>?"])
    func keysWithSpacesAreAccepted(_ key: String) async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let body = APIClient.orderBody()
            let first = try await api.post("/v1/orders", as: .pos, key: key, body)
            #expect(first.status == .created, "\(first.text)")
            let replay = try await api.post("/v1/orders", as: .pos, key: key, body)
            #expect(replay.status == .created && replay.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
            #expect(replay.json["id"] as? String == first.json["id"] as? String)
        }
    }

    @Test("an Idempotency-Key outside printable ASCII or longer than 255 is refused as missing",
          arguments: ["tab\there", "café", String(repeating: "k", count: 256), "\u{7F}"])
    func otherKeysAreRefused(_ key: String) async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let refused = try await api.post("/v1/orders", as: .pos, key: key, APIClient.orderBody())
            #expect(refused.status == .badRequest && refused.errorCode == "missing_idempotency_key", "\(refused.text)")
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 0)
        }
    }
}
