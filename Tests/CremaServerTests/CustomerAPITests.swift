import CremaAPI
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import JWTKit
import NIOCore
import Testing

/// The customer's own API (`/v1/me`, docs/design.md §9.1) through the real router and database: customer A's token
/// never reads or changes anything of customer B's, on every route; answers revalidate with ETags.
@Suite(.serialized) struct CustomerAPITests {
    typealias F = CustomerTokenFixtures
    static let tokenA = String(repeating: "a1", count: 32)
    static let tokenB = String(repeating: "b2", count: 32)

    /// Places an order for `customer` and returns its id.
    static func place(_ api: APIClient, customer: String) async throws -> String {
        try await api.createStore()
        let body = """
            {"store_id":"market-st","pos_ref":"T-1","customer_ref":"\(customer)","display_name":"Ana","locale":"en",
             "items":[{"name":"Oat latte","quantity":1}],"eta":"\(Date().addingTimeInterval(600).formatted(.iso8601))"}
            """
        let response = try await api.post("/v1/orders", as: .pos, body)
        guard let id = response.json["id"] as? String else { throw APIClient.HarnessError.unexpected(response.text) }
        return id
    }

    static func me(
        _ api: APIClient, _ method: HTTPRequest.Method, _ uri: String, _ customer: String, body: String? = nil
    ) async throws -> APIResponse {
        try await api.send(method, uri, body: body, rawKey: "Bearer \(try await F.token(for: customer))")
    }

    @Test("customer a reads only their own orders and b answers as if they did not exist") func customerAReadsOnlyTheirOwnOrdersAndBAnswersAsIfTheyDidNotExist() async throws {
        try await APIHarness.run { api, _ in
            let mine = try await Self.place(api, customer: "alice")
            _ = try await Self.place(api, customer: "bob")

            let list = try await Self.me(api, .get, "/v1/me/orders", "alice")
            #expect(list.status == .ok)
            let orders = try #require(list.json["orders"] as? [[String: Any]])
            #expect(orders.map { $0["id"] as? String } == [mine])
            #expect(orders[0]["projection"] is [String: Any])

            let own = try await Self.me(api, .get, "/v1/me/orders/\(mine)", "alice")
            #expect(own.status == .ok)
            #expect((own.json["order"] as? [String: Any])?["id"] as? String == mine)
            #expect(own.json.keys.contains("last_delivered"))

            let theirs = try await Self.me(api, .get, "/v1/me/orders/\(mine)", "bob")
            let nobody = try await Self.me(api, .get, "/v1/me/orders/\(UUID().uuidString.lowercased())", "bob")
            #expect(theirs.status == .notFound)
            #expect(theirs.errorCode == "unknown_order")
            #expect(theirs.text == nobody.text)

            let bobs = try await Self.me(api, .get, "/v1/me/orders", "bob")
            #expect((bobs.json["orders"] as? [[String: Any]])?.compactMap { $0["id"] as? String }.contains(mine) == false)
        }
    }

    @Test("customer b cannot register an activity token on as order and nothing is written") func customerBCannotRegisterAnActivityTokenOnAsOrderAndNothingIsWritten() async throws {
        try await APIHarness.run { api, db in
            let mine = try await Self.place(api, customer: "alice")
            let body = #"{"token":"\#(Self.tokenB)","environment":"sandbox"}"#
            let refused = try await Self.me(api, .put, "/v1/me/orders/\(mine)/live-activity-token", "bob", body: body)
            #expect(refused.status == .notFound)
            #expect(refused.errorCode == "unknown_order")
            #expect(try await db.scalar("SELECT count(*) FROM push_targets", as: Int.self) == 0)

            let accepted = try await Self.me(
                api, .put, "/v1/me/orders/\(mine)/live-activity-token", "alice", body: #"{"token":"\#(Self.tokenA)","environment":"sandbox"}"#)
            #expect(accepted.status == .created)
            #expect(accepted.json["kind"] as? String == "live_activity")
            #expect(try await db.scalar("SELECT count(*) FROM push_targets WHERE retired_at IS NULL", as: Int.self) == 1)
        }
    }

    @Test("a customer cannot take another customers activity token by registering it on their own order") func aCustomerCannotTakeAnotherCustomersActivityTokenByRegisteringItOnTheirOwnOrder() async throws {
        try await APIHarness.run { api, db in
            let alices = try await Self.place(api, customer: "alice")
            let bobs = try await Self.place(api, customer: "bob")
            let body = #"{"token":"\#(Self.tokenA)","environment":"sandbox"}"#
            #expect(try await Self.me(api, .put, "/v1/me/orders/\(alices)/live-activity-token", "alice", body: body).status == .created)
            #expect(try await Self.me(api, .put, "/v1/me/orders/\(bobs)/live-activity-token", "bob", body: body).status == .created)
            // Alice's registration still stands: Bob's did not retire it.
            let alicesActive = try await db.scalar(
                "SELECT count(*) FROM push_targets WHERE order_id = \(UUID(uuidString: alices)!) AND retired_at IS NULL", as: Int.self)
            #expect(alicesActive == 1)
        }
    }

    @Test("customer tokens are their own and another customer can neither delete nor rotate them") func customerTokensAreTheirOwnAndAnotherCustomerCanNeitherDeleteNorRotateThem() async throws {
        try await APIHarness.run { api, db in
            let put = try await Self.me(api, .put, "/v1/me/tokens/alert/\(Self.tokenA)", "alice", body: #"{"environment":"production"}"#)
            #expect(put.status == .created)
            #expect(put.json["kind"] as? String == "alert")

            let delete = try await Self.me(api, .delete, "/v1/me/tokens/alert/\(Self.tokenA)", "bob")
            #expect(delete.status == .notFound)
            #expect(delete.errorCode == "unknown_token")
            let rotate = try await Self.me(
                api, .put, "/v1/me/tokens/alert/\(Self.tokenB)", "bob", body: #"{"environment":"production","replaces":"\#(Self.tokenA)"}"#)
            #expect(rotate.status == .created)
            let alices = try await db.scalar(
                "SELECT count(*) FROM customer_tokens WHERE customer_ref = 'alice' AND retired_at IS NULL", as: Int.self)
            #expect(alices == 1)

            #expect(try await Self.me(api, .delete, "/v1/me/tokens/alert/\(Self.tokenA)", "alice").status == .noContent)
            #expect(try await Self.me(api, .delete, "/v1/me/tokens/alert/\(Self.tokenA)", "alice").status == .notFound)
        }
    }

    @Test("the widget feed shows only the customers own open order with its relevance window") func theWidgetFeedShowsOnlyTheCustomersOwnOpenOrderWithItsRelevanceWindow() async throws {
        try await APIHarness.run { api, _ in
            let mine = try await Self.place(api, customer: "alice")
            let feed = try await Self.me(api, .get, "/v1/me/widget", "alice")
            #expect(feed.status == .ok)
            #expect((feed.json["order"] as? [String: Any])?["id"] as? String == mine)
            #expect(feed.json["open_orders"] as? Int == 1)
            let relevance = try #require(feed.json["relevance"] as? [String: Any])
            let eta = try #require((feed.json["order"] as? [String: Any])?["eta"] as? String).flatMap { try? Date($0, strategy: .iso8601) }
            let start = try #require((relevance["start"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            let end = try #require((relevance["end"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
            #expect(start < eta! && eta! < end)

            let bobs = try await Self.me(api, .get, "/v1/me/widget", "bob")
            #expect(bobs.status == .ok)
            #expect(bobs.json["order"] is NSNull)
            #expect(bobs.json["relevance"] is NSNull)
            #expect(bobs.json["open_orders"] as? Int == 0)
        }
    }

    @Test("an order read again with its ETag answers 304 until the order changes") func anOrderReadAgainWithItsETagAnswers304UntilTheOrderChanges() async throws {
        try await APIHarness.run { api, _ in
            let id = try await Self.place(api, customer: "alice")
            let token = try await F.token(for: "alice")
            let first = try await api.send(.get, "/v1/me/orders/\(id)", rawKey: "Bearer \(token)")
            let etag = try #require(first.headers[.eTag])
            #expect(first.headers[.cacheControl] == "private, no-cache")

            var headers: HTTPFields = [.authorization: "Bearer \(token)", .ifNoneMatch: etag]
            let again = try await api.request(.get, "/v1/me/orders/\(id)", headers: headers)
            #expect(again.status == .notModified)
            #expect(again.headers[.eTag] == etag)
            #expect(again.text.isEmpty)

            #expect(try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#).status == .ok)
            let changed = try await api.request(.get, "/v1/me/orders/\(id)", headers: headers)
            #expect(changed.status == .ok)
            #expect(changed.headers[.eTag] != etag)

            // The list and the widget feed revalidate the same way.
            for path in ["/v1/me/orders", "/v1/me/widget"] {
                headers[.ifNoneMatch] = nil
                let fresh = try await api.request(.get, path, headers: headers)
                let tag = try #require(fresh.headers[.eTag])
                headers[.ifNoneMatch] = tag
                #expect(try await api.request(.get, path, headers: headers).status == .notModified)
            }
        }
    }

    /// Each refused token, on a write route: 401 with its own code, and no row written.
    @Test("a refused token gets 401 with its code and writes nothing", arguments: [
        ("forged", CustomerTokenRefusal.badSignature), ("expired", .expired), ("not yet valid", .notYetValid),
        ("wrong issuer", .wrongIssuer), ("wrong audience", .wrongAudience), ("alg none", .algorithmRefused),
        ("HS/ES confusion", .badSignature), ("ES256 from another key", .badSignature), ("other tenant", .unknownTenant), ("no subject", .missingClaim),
    ])
    func aRefusedTokenGets401WithItsCodeAndWritesNothing(_ label: String, _ expected: CustomerTokenRefusal) async throws {
        let token: String
        switch label {
        case "forged": token = try await F.hs256(secret: "an-attackers-secret-0123456789abcdef")
        case "expired": token = try await F.hs256(F.Claims(exp: F.now.addingTimeInterval(-3600)))
        case "not yet valid": token = try await F.hs256(F.Claims(nbf: F.now.addingTimeInterval(3600)))
        case "wrong issuer": token = try await F.hs256(F.Claims(iss: "https://evil.example"))
        case "wrong audience": token = try await F.hs256(F.Claims(aud: "someone-else"))
        case "alg none": token = try F.unsigned()
        // The server holds an HS256 secret too, so an HS256 token is checked, but only with that secret:
        // an HMAC keyed with the ES256 public key never verifies. (ES256-only servers: CustomerTokenTests.)
        case "HS/ES confusion": token = try F.confused(publicKeyPEM: F.signingKey.publicKey.pemRepresentation)
        case "ES256 from another key": token = try await F.es256(key: ES256PrivateKey())
        case "other tenant": token = try await F.hs256(F.Claims(tenant: "acme"))
        default: token = try await F.hs256(F.Claims(sub: nil))
        }
        try await APIHarness.run("refused-\(label)") { api, db in
            let response = try await api.send(
                .put, "/v1/me/tokens/alert/\(Self.tokenA)", body: #"{"environment":"production"}"#, rawKey: "Bearer \(token)")
            #expect(response.status == .unauthorized)
            #expect(response.errorCode == expected.code)
            #expect(response.headers[.wwwAuthenticate] == #"Bearer error="invalid_token""#)
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens", as: Int.self) == 0)
        }
    }

    @Test("an ES 256 token from the brands key is accepted next to the shared secret") func anES256TokenFromTheBrandsKeyIsAcceptedNextToTheSharedSecret() async throws {
        try await APIHarness.run { api, _ in
            let token = try await F.es256(F.Claims(sub: "alice"), key: F.signingKey)
            #expect(try await api.send(.get, "/v1/me/orders", rawKey: "Bearer \(token)").status == .ok)
        }
    }

    @Test("the me routes want a customer token and the shop routes refuse one") func theMeRoutesWantACustomerTokenAndTheShopRoutesRefuseOne() async throws {
        try await APIHarness.run { api, _ in
            let id = try await Self.place(api, customer: "alice")
            let withKey = try await api.send(.get, "/v1/me/orders", as: .app)
            #expect(withKey.status == .forbidden)
            #expect(withKey.errorCode == "customer_token_required")
            #expect(try await api.send(.get, "/v1/me/widget").status == .unauthorized)
            let shop = try await Self.me(api, .get, "/v1/orders/\(id)", "alice")
            #expect(shop.status == .forbidden)
            #expect(shop.errorCode == "forbidden")
            // The shared app key keeps working for the brand's backend.
            let server = try await api.send(
                .put, "/v1/customers/alice/tokens/alert/\(Self.tokenA)", as: .app, body: #"{"environment":"production"}"#)
            #expect(server.status == .created)
        }
    }
}
