import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// `DELETE /v1/customers/{ref}` through the real router and database (docs/data-lifecycle.md): one customer's personal
/// data goes from every table at once, another customer's stays, and the counts and timings of orders remain.
@Suite(.serialized) struct ErasureAPITests {
    static let erased = (ref: "c-erase-7", name: "Zoë Erasable")
    static let kept = (ref: "c-keep-8", name: "Bruno Keeper")
    static let erasedTokens = (activity: String(repeating: "e1", count: 32), alert: String(repeating: "e2", count: 32),
                               widget: String(repeating: "e3", count: 32), pushToStart: String(repeating: "e4", count: 32))
    static let keptToken = String(repeating: "c5", count: 32)

    static func place(_ api: APIClient, ref: String, name: String, key: String = UUID().uuidString) async throws -> String {
        let body = """
            {"store_id":"market-st","pos_ref":"T-7","customer_ref":"\(ref)","display_name":"\(name)","locale":"en",
             "items":[{"name":"Oat latte","quantity":2}],"eta":"\(Date().addingTimeInterval(600).formatted(.iso8601))"}
            """
        let response = try await api.post("/v1/orders", as: .pos, key: key, body)
        guard let id = response.json["id"] as? String else { throw APIClient.HarnessError.unexpected(response.text) }
        return id
    }

    static func event(_ api: APIClient, _ id: String, _ body: String, as role: Role = .barista) async throws {
        let response = try await api.post("/v1/orders/\(id)/events", as: role, body)
        guard response.status == .ok else { throw APIClient.HarnessError.unexpected(response.text) }
    }

    /// Every (table, column) of the schema that can hold text: found generically, so a table added later is searched too.
    static func textColumns(_ db: TestDatabase) async throws -> [(table: String, column: String, type: String)] {
        try await db.pool.withConnection { connection in
            try await connection.query(
                """
                SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
                JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
                WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
                  AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea', 'ARRAY')
                ORDER BY 1, 2
                """
            ).map { (try $0.decode("table_name"), try $0.decode("column_name"), try $0.decode("data_type")) }
        }
    }

    /// Where `needle` occurs in the schema, as "table.column" (empty when nowhere).
    static func traces(of needle: String, in db: TestDatabase) async throws -> [String] {
        var found: [String] = []
        for (table, column, type) in try await textColumns(db) {
            let match = type == "bytea"
                ? "position(convert_to($1, 'UTF8') in \"\(column)\") > 0"
                : "strpos(\"\(column)\"::text, $1) > 0"
            let count = try await db.scalar(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(table)\" WHERE \(match)", binds: [needle]), as: Int.self)
            if count > 0 { found.append("\(table).\(column)") }
        }
        return found
    }

    @Test("After an erasure no column of any table holds the customer's ref, name or tokens; another customer's data and every order's counts and timings stay")
    func erasureLeavesNoTraceAndKeepsTheRest() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            // A receiver for every type, so the webhook outbox holds the customer's orders too (nothing is sent here).
            try await db.pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                    VALUES ('default', gen_random_uuid(), 'https://93.184.215.14/hooks',
                            ARRAY['order.changed', 'delivery.dead', 'token.retired', 'activity.ended'], '\\x00', now())
                    """)
            }
            let t = Self.erasedTokens
            let first = try await Self.place(api, ref: Self.erased.ref, name: Self.erased.name)
            let second = try await Self.place(api, ref: Self.erased.ref, name: Self.erased.name)
            _ = try await api.send(.put, "/v1/orders/\(first)/live-activity-token", as: .app, body: #"{"token":"\#(t.activity)","environment":"sandbox"}"#)
            for (kind, token) in [("alert", t.alert), ("widget", t.widget), ("push-to-start", t.pushToStart)] {
                let registered = try await api.send(.put, "/v1/customers/\(Self.erased.ref)/tokens/\(kind)/\(token)", as: .app, body: #"{"environment":"production"}"#)
                #expect(registered.status == .created)
            }
            try await Self.event(api, first, #"{"type":"started","barista":"Sam"}"#)
            try await Self.event(api, first, #"{"type":"delayed","eta":"\#(Date().addingTimeInterval(1200).formatted(.iso8601))","reason":"\#(Self.erased.name) asked for oat milk"}"#)
            try await Self.event(api, first, #"{"type":"ready","pickup_point":"counter"}"#)
            try await Self.event(api, second, #"{"type":"canceled","reason":"\#(Self.erased.name) changed their mind"}"#, as: .pos)
            let other = try await Self.place(api, ref: Self.kept.ref, name: Self.kept.name)
            _ = try await api.send(.put, "/v1/customers/\(Self.kept.ref)/tokens/alert/\(Self.keptToken)", as: .app, body: #"{"environment":"production"}"#)
            try await Self.event(api, other, #"{"type":"ready"}"#)

            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE event_type = 'order.changed'", as: Int.self) == 8)
            #expect(try await Self.traces(of: Self.erased.name, in: db).contains("webhook_events.body"), "the webhook outbox must hold the name first")
            let needles = [Self.erased.ref, Self.erased.name, t.activity, t.alert, t.widget, t.pushToStart]
            for needle in needles { #expect(try await !Self.traces(of: needle, in: db).isEmpty, "the test must put \(needle) somewhere first") }
            let before = try await db.pool.withConnection { connection in
                try await connection.query("SELECT order_id::text, number, state, version, placed_at::text, updated_at::text FROM orders ORDER BY number")
                    .map { try [$0.decode("order_id", as: String.self), "\(try $0.decode("number", as: Int.self))", try $0.decode("state", as: String.self),
                                "\(try $0.decode("version", as: Int.self))", try $0.decode("placed_at", as: String.self), try $0.decode("updated_at", as: String.self)] }
            }
            let eventsBefore = try await db.scalar("SELECT count(*) FROM order_events", as: Int.self)

            let erased = try await api.send(.delete, "/v1/customers/\(Self.erased.ref)", as: .pos)
            #expect(erased.status == .noContent)

            for needle in needles {
                let found = try await Self.traces(of: needle, in: db)
                #expect(found.isEmpty, "\(needle) is still in \(found)")
            }
            for needle in [Self.kept.ref, Self.kept.name, Self.keptToken] {
                #expect(try await !Self.traces(of: needle, in: db).isEmpty, "\(needle) of the other customer must stay")
            }
            let after = try await db.pool.withConnection { connection in
                try await connection.query("SELECT order_id::text, number, state, version, placed_at::text, updated_at::text FROM orders ORDER BY number")
                    .map { try [$0.decode("order_id", as: String.self), "\(try $0.decode("number", as: Int.self))", try $0.decode("state", as: String.self),
                                "\(try $0.decode("version", as: Int.self))", try $0.decode("placed_at", as: String.self), try $0.decode("updated_at", as: String.self)] }
            }
            #expect(after == before)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == eventsBefore)

            let order = try await api.send(.get, "/v1/orders/\(first)", as: .dashboard)
            #expect(order.status == .ok)
            #expect(order.json["display_name"] as? String == "")
            #expect(order.json["customer_ref"] is NSNull)
            #expect(order.json["state"] as? String == "ready")

            let log = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT customer_ref_sha256 = sha256(convert_to(\(Self.erased.ref), 'UTF8')) AS hashed, orders, tokens
                    FROM customer_erasures WHERE tenant_id = 'default'
                    """)
            }
            #expect(log.count == 1)
            #expect(try log.first?.decode("hashed", as: Bool.self) == true)
            #expect(try log.first?.decode("orders", as: Int.self) == 2)
            #expect(try log.first?.decode("tokens", as: Int.self) == 4)

            let again = try await api.send(.delete, "/v1/customers/\(Self.erased.ref)", as: .pos)
            #expect(again.status == .notFound)
            #expect(again.errorCode == "customer_not_found")
        }
    }

    @Test("Erasing a customer the tenant does not know is 404 customer_not_found and logs nothing")
    func unknownCustomerIsNotFound() async throws {
        try await APIHarness.run { api, db in
            let response = try await api.send(.delete, "/v1/customers/nobody-42", as: .pos)
            #expect(response.status == .notFound)
            #expect(response.errorCode == "customer_not_found")
            #expect(try await db.scalar("SELECT count(*) FROM customer_erasures", as: Int.self) == 0)
        }
    }

    @Test("Erasure is for pos and admin keys; other roles are refused with 403")
    func onlyPOSAndAdminMayErase() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            _ = try await Self.place(api, ref: "c-admin-1", name: "Ana")
            for role in [Role.barista, .dashboard, .app] {
                let refused = try await api.send(.delete, "/v1/customers/c-admin-1", as: role)
                #expect(refused.status == .forbidden, "\(role)")
            }
            let byAdmin = try await api.send(.delete, "/v1/customers/c-admin-1", rawKey: "Bearer \(APIHarness.adminKey)")
            #expect(byAdmin.status == .noContent)
        }
    }

    @Test("Erasure stays in the key's tenant, and a key limited to some stores may not erase")
    func erasureIsTenantScoped() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            _ = try await Self.place(api, ref: "c-shared", name: "Default Dana")
            let harbor = try await TenantAPITests.harbor(api)
            let harborStore = try await api.send(
                .put, "/v1/stores/pier-1", body: #"{"name":"Pier 1"}"#, rawKey: TenantAPITests.bearer(harbor.pos))
            #expect(harborStore.status == .created)
            let placed = try await api.send(
                .post, "/v1/orders", idempotencyKey: UUID().uuidString,
                body: APIClient.orderBody(store: "pier-1").replacingOccurrences(of: "\"Ana\"", with: "\"Harbor Hana\"")
                    .replacingOccurrences(of: "\"c-9\"", with: "\"c-shared\""),
                rawKey: TenantAPITests.bearer(harbor.pos))
            #expect(placed.status == .created)

            let limited = try await TenantAPITests.issue(api, tenant: "harbor", role: "pos", stores: ["pier-1"])
            let refused = try await api.send(.delete, "/v1/customers/c-shared", rawKey: TenantAPITests.bearer(limited))
            #expect(refused.status == .forbidden && refused.errorCode == "forbidden")

            let erased = try await api.send(.delete, "/v1/customers/c-shared", rawKey: TenantAPITests.bearer(harbor.admin))
            #expect(erased.status == .noContent)
            #expect(try await !Self.traces(of: "Default Dana", in: db).isEmpty)
            #expect(try await Self.traces(of: "Harbor Hana", in: db).isEmpty)
            #expect(try await db.scalar("SELECT count(*) FROM orders WHERE tenant_id = 'default' AND customer_ref = 'c-shared'", as: Int.self) == 1)
        }
    }

    @Test("Erasure blanks the stored answers that mention the customer, so their retry cannot place again, and leaves others' replayable")
    func storedAnswersOfOthersStayReplayable() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let body = { (ref: String, posRef: String) in
                """
                {"store_id":"market-st","pos_ref":"\(posRef)","customer_ref":"\(ref)","display_name":"Ana","locale":"en",
                 "items":[{"name":"Oat latte","quantity":1}],"eta":"\(Date().addingTimeInterval(600).formatted(.iso8601))"}
                """
            }
            let erasedBody = body("c-1", "T-1")
            let otherBody = body("c-12", "c-1")
            #expect(try await api.post("/v1/orders", as: .pos, key: "till-erased", erasedBody).status == .created)
            #expect(try await api.post("/v1/orders", as: .pos, key: "till-other", otherBody).status == .created)

            #expect(try await api.send(.delete, "/v1/customers/c-1", as: .pos).status == .noContent)

            let retried = try await api.post("/v1/orders", as: .pos, key: "till-erased", erasedBody)
            #expect(retried.status == .unprocessableContent && retried.errorCode == "idempotency_mismatch")
            let replayed = try await api.post("/v1/orders", as: .pos, key: "till-other", otherBody)
            #expect(replayed.status == .created)
            #expect(replayed.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")
        }
    }

    @Test("A customer token on a live activity of an erased customer's order is gone, so nothing more is planned for it")
    func erasedOrderPlansNoMorePushes() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await Self.place(api, ref: Self.erased.ref, name: Self.erased.name)
            _ = try await api.send(.put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(Self.erasedTokens.activity)","environment":"sandbox"}"#)
            #expect(try await api.send(.delete, "/v1/customers/\(Self.erased.ref)", as: .pos).status == .noContent)
            #expect(try await db.scalar("SELECT count(*) FROM delivery_outbox WHERE state = 'pending'", as: Int.self) == 0)
            try await Self.event(api, id, #"{"type":"ready"}"#)
            let deliveries = try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .dashboard)
            let last = (deliveries.json["deliveries"] as? [[String: Any]])?.last
            #expect(last?["reason_code"] as? String == "no_targets")
        }
    }
}
