import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaServer
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Every error the API documents, each checked for its status, code, details and for writing nothing.
@Suite(.timeLimit(.minutes(2))) struct ErrorAPITests {
    @Test("authentication and roles are enforced") func authenticationAndRolesAreEnforced() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await api.placeOrder()
            let noKey = try await api.send(.post, "/v1/orders", idempotencyKey: "a", body: APIClient.orderBody())
            #expect(noKey.status == .unauthorized && noKey.errorCode == "unauthorized")
            #expect(noKey.headers[.wwwAuthenticate] == "Bearer")
            let badKey = try await api.send(.get, "/v1/orders/\(id)", rawKey: "Bearer not-a-key-at-all-000")
            #expect(badKey.status == .unauthorized)
            let dashboardPlacing = try await api.post("/v1/orders", as: .dashboard, APIClient.orderBody())
            #expect(dashboardPlacing.status == .forbidden && dashboardPlacing.errorCode == "forbidden")
            let posStarting = try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"started","barista":"Sam"}"#)
            #expect(posStarting.status == .forbidden)
            let appReading = try await api.send(.get, "/v1/orders/\(id)", as: .app)
            #expect(appReading.status == .forbidden)
            let baristaRenaming = try await api.send(.put, "/v1/stores/market-st", as: .barista, body: #"{"name":"x"}"#)
            #expect(baristaRenaming.status == .forbidden)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 1)
        }
    }

    @Test("malformed requests are refused naming the field") func malformedRequestsAreRefusedNamingTheField() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await api.placeOrder()
            let missingKey = try await api.send(.post, "/v1/orders", as: .pos, body: APIClient.orderBody())
            #expect(missingKey.status == .badRequest && missingKey.errorCode == "missing_idempotency_key")
            let malformed = try await api.post("/v1/orders", as: .pos, #"{"store_id": "#)
            #expect(malformed.status == .badRequest && malformed.errorCode == "malformed_json")
            #expect(malformed.errorDetails["line"] as? Int == 1 && malformed.errorDetails["column"] as? Int == 14)
            let twoLines = try await api.post("/v1/orders", as: .pos, "{\n  \"store_id\": \"x\",\n  \"pos_ref\" \"T\"\n}")
            #expect(twoLines.errorDetails["line"] as? Int == 3 && twoLines.errorDetails["column"] as? Int == 13)
            #expect(twoLines.errorDetails["expected"] as? String == "':'")
            #expect(twoLines.errorMessage == "The request body is not valid JSON: expected ':' at line 3, column 13 (byte 33).")
            let wrongType = try await api.post(
                "/v1/orders", as: .pos, APIClient.orderBody().replacingOccurrences(of: #""quantity":1"#, with: #""quantity":"one""#))
            #expect(wrongType.status == .badRequest && wrongType.errorCode == "invalid_field")
            #expect(wrongType.errorDetails["field"] as? String == "items[0].quantity")
            let missing = try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"canceled"}"#)
            #expect(missing.errorCode == "invalid_field" && missing.errorDetails["field"] as? String == "reason")
            let unknownType = try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"brewed"}"#)
            #expect(unknownType.errorDetails["field"] as? String == "type")
            let badID = try await api.send(.get, "/v1/orders/42", as: .pos)
            #expect(badID.status == .badRequest && badID.errorDetails["field"] as? String == "id")
            let badLimit = try await api.send(.get, "/v1/orders?store=market-st&limit=0", as: .pos)
            #expect(badLimit.errorDetails["field"] as? String == "limit")
            let notAnObject = try await api.post("/v1/orders", as: .pos, "[1,2]")
            #expect(notAnObject.status == .badRequest)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 1)
        }
    }

    @Test("semantic errors are 422 and conflicts are 409 with details") func semanticErrorsAre422AndConflictsAre409WithDetails() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await api.placeOrder()
            let noItems = try await api.post(
                "/v1/orders", as: .pos, APIClient.orderBody().replacingOccurrences(of: #"{"name":"Oat latte","size":"grande","quantity":1,"modifiers":["extra shot"]}"#, with: ""))
            #expect(noItems.status == .unprocessableContent && noItems.errorCode == "invalid_value")
            #expect(noItems.errorDetails["field"] as? String == "items")
            let transition = try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"picked_up"}"#)
            #expect(transition.status == .conflict && transition.errorCode == "invalid_transition")
            #expect(transition.errorDetails["from"] as? String == "queued")
            #expect(transition.errorDetails["event"] as? String == "picked_up")
            #expect(transition.errorDetails["allowed"] as? [String] == ["started", "delayed", "ready", "canceled"])
            let stale = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"started","barista":"S","expected_version":3}"#)
            #expect(stale.status == .conflict && stale.errorCode == "version_conflict")
            #expect(stale.errorDetails["actual"] as? Int == 1)
            _ = try await api.post("/v1/orders/\(id)/events", as: .pos, key: "reused", #"{"type":"delayed","eta":"\#(Date().addingTimeInterval(900).formatted(.iso8601))"}"#)
            let mismatch = try await api.post("/v1/orders/\(id)/events", as: .pos, key: "reused", #"{"type":"canceled","reason":"x"}"#)
            #expect(mismatch.status == .unprocessableContent && mismatch.errorCode == "idempotency_mismatch")
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 2)
        }
    }

    @Test("unknown things are 404") func unknownThingsAre404() async throws {
        try await APIHarness.run { api, db in
            let unknownStore = try await api.post("/v1/orders", as: .pos, APIClient.orderBody(store: "nowhere"))
            #expect(unknownStore.status == .notFound && unknownStore.errorCode == "unknown_store")
            let unknownOrder = try await api.send(.get, "/v1/orders/\(UUID().uuidString)", as: .pos)
            #expect(unknownOrder.status == .notFound && unknownOrder.errorCode == "unknown_order")
            let unknownRoute = try await api.send(.get, "/v2/nothing", as: .pos)
            #expect(unknownRoute.status == .notFound && unknownRoute.errorCode == "not_found")
            let wrongMethod = try await api.send(.delete, "/v1/orders/\(UUID().uuidString)", as: .pos)
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.errorCode == "method_not_allowed")
            #expect(wrongMethod.headers[.allow] == "GET")
            let board = try await api.send(.get, "/v1/stores/nowhere/board", as: .pos)
            #expect(board.errorCode == "unknown_store")
            #expect(try await db.scalar("SELECT count(*) FROM idempotency_keys", as: Int.self) == 0)
        }
    }

    @Test("a body over the limit is 413") func aBodyOverTheLimitIs413() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let huge = #"{"store_id":"market-st","pad":""# + String(repeating: "x", count: 70_000) + #""}"#
            let response = try await api.post("/v1/orders", as: .pos, huge)
            #expect(response.status == .contentTooLarge && response.errorCode == "payload_too_large")
            #expect(try await db.scalar("SELECT count(*) FROM orders", as: Int.self) == 0)
        }
    }

    @Test("an unreachable database is 503 with retry after") func anUnreachableDatabaseIs503WithRetryAfter() async throws {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1 connect_timeout=2 user=x dbname=x", acquireTimeout: .seconds(1)))
        let app = CremaApplication.build(try APIHarness.dependencies(pool: pool), host: "127.0.0.1", port: 0, logger: .init(label: "test"))
        try await app.test(.router) { client in
            let api = APIClient(client: client)
            let response = try await api.post("/v1/orders", as: .pos, APIClient.orderBody())
            #expect(response.status == .serviceUnavailable)
            #expect(response.errorCode == "database_unavailable")
            #expect(response.headers[.retryAfter] != nil)
            let ready = try await api.send(.get, "/health/ready")
            #expect(ready.status == .serviceUnavailable)
            #expect(ready.json["database"] as? String == "unreachable")
            #expect((ready.json["migrations"] as? [String: Any])?["pending"] as? [Int] == [])
            let live = try await api.send(.get, "/health/live")
            #expect(live.status == .ok)
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct ValidationAPITests {
    @Test("a store name is measured as the database measures it") func aStoreNameIsMeasuredAsTheDatabaseMeasuresIt() async throws {
        try await APIHarness.run { api, _ in
            // 61 flags: 61 characters but 122 code points, over the 120 the table allows.
            let flags = String(repeating: "🇯🇵", count: 61)
            let response = try await api.send(.put, "/v1/stores/flags", as: .pos, body: #"{"name":"\#(flags)"}"#)
            #expect(response.status == .unprocessableContent && response.errorDetails["field"] as? String == "name")
        }
    }

    @Test("an invalid store ID in an order is a 422 naming the field") func anInvalidStoreIDInAnOrderIsA422NamingTheField() async throws {
        try await APIHarness.run { api, db in
            let response = try await api.post("/v1/orders", as: .pos, APIClient.orderBody(store: "Market St"))
            #expect(response.status == .unprocessableContent)
            #expect(response.errorDetails["field"] as? String == "store_id")
            #expect(try await db.scalar("SELECT count(*) FROM idempotency_keys", as: Int.self) == 0)
        }
    }
}
