import CremaCore
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import Prometheus
import Testing

/// Load limits (docs/limits.md): each refusal a clear 4xx with a stable code, each counted; a tenant's own limits set by
/// the operator's bootstrap key only.
@Suite struct LimitsAPITests {
    static let admin = "Bearer \(APIHarness.adminKey)"

    static func setLimits(_ api: APIClient, tenant: String = "default", _ body: String) async throws {
        let response = try await api.send(.put, "/v1/admin/tenants/\(tenant)/limits", body: body, rawKey: admin)
        #expect(response.status == .ok, "\(response.text)")
    }

    static func token(_ n: Int) -> String { String(format: "%064x", n) }

    @Test("a customer's tokens past the limit are refused with limit_reached, and a refresh or a rotation never needs a spare place")
    func tokensPerCustomer() async throws {
        try await APIHarness.run { api, db in
            try await Self.setLimits(api, #"{"tokens_per_customer":2}"#)
            let path = { (kind: String, n: Int) in "/v1/customers/c-9/tokens/\(kind)/\(Self.token(n))" }
            let body = #"{"environment":"production"}"#
            #expect(try await api.send(.put, path("alert", 1), as: .app, body: body).status == .created)
            #expect(try await api.send(.put, path("alert", 2), as: .app, body: body).status == .created)
            let third = try await api.send(.put, path("alert", 3), as: .app, body: body)
            #expect(third.status == .conflict)
            #expect(third.errorCode == "limit_reached")
            #expect(third.errorDetails["limit"] as? String == "tokens_per_customer")
            #expect(third.errorDetails["value"] as? Int == 2)
            // Registering a held token again, rotating one, or another kind: all within the limit.
            #expect(try await api.send(.put, path("alert", 1), as: .app, body: body).status == .ok)
            let rotated = try await api.send(
                .put, path("alert", 3), as: .app, body: #"{"environment":"production","replaces":"\#(Self.token(2))"}"#)
            #expect(rotated.status == .created, "\(rotated.text)")
            #expect(try await api.send(.put, path("widget", 4), as: .app, body: body).status == .created)
            #expect(
                try await db.scalar("SELECT count(*) FROM customer_tokens WHERE kind = 'alert' AND retired_at IS NULL", as: Int.self) == 2)
            let metrics = try await api.send(.get, "/metrics")
            #expect(metrics.text.contains(#"crema_limits_refusals_total{limit="tokens_per_customer"} 1"#))
        }
    }

    @Test("concurrent registrations cannot both take a customer's last place")
    func concurrentTokensTakeTurns() async throws {
        try await APIHarness.run { api, db in
            try await Self.setLimits(api, #"{"tokens_per_customer":3}"#)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for n in 1...8 {
                    group.addTask {
                        try await api.send(.put, "/v1/customers/c-9/tokens/alert/\(Self.token(n))", as: .app, body: #"{"environment":"production"}"#).status
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 3)
            #expect(statuses.filter { $0 == .conflict }.count == 5)
            #expect(try await db.scalar("SELECT count(*) FROM customer_tokens WHERE retired_at IS NULL", as: Int.self) == 3)
        }
    }

    @Test("events past an order's limit are refused and change nothing, but its end is always accepted")
    func eventsPerOrder() async throws {
        try await APIHarness.run { api, db in
            try await Self.setLimits(api, #"{"events_per_order":4}"#)
            try await api.createStore()
            let id = try await api.placeOrder()
            let delay = #"{"type":"delayed","eta":"\#(Date().addingTimeInterval(900).formatted(.iso8601))","reason":"busy"}"#
            #expect(try await api.post("/v1/orders/\(id)/events", as: .pos, delay).status == .ok)
            #expect(try await api.post("/v1/orders/\(id)/events", as: .pos, delay).status == .ok)
            let refused = try await api.post("/v1/orders/\(id)/events", as: .pos, delay)
            #expect(refused.status == .conflict)
            #expect(refused.errorCode == "limit_reached")
            #expect(refused.errorDetails["limit"] as? String == "events_per_order")
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 3)
            #expect(try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"canceled","reason":"closing"}"#).status == .ok)
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 4)
        }
    }

    @Test("the operator's default applies to a tenant that set none, and the answer says which limits are the tenant's own")
    func limitsAreShownAndValidated() async throws {
        try await APIHarness.run { api, _ in
            let shown = try await api.send(.get, "/v1/admin/tenants/default/limits", rawKey: Self.admin)
            #expect(shown.json["tokens_per_customer"] as? Int == 20)
            #expect(shown.json["streams_per_key"] as? Int == 64)
            #expect(shown.json["webhooks"] as? Int == 20)
            #expect(shown.json["events_per_order"] as? Int == 64)
            #expect(shown.json["rate"] as? String == "200/400")
            #expect(shown.json["share"] as? Int == 1)
            #expect(shown.json["own"] as? [String] == [])
            try await Self.setLimits(api, #"{"webhooks":5,"rate":"0","share":3}"#)
            let changed = try await api.send(.get, "/v1/admin/tenants/default/limits", rawKey: Self.admin)
            #expect(changed.json["webhooks"] as? Int == 5)
            #expect(changed.json["rate"] as? String == "0")
            #expect(changed.json["share"] as? Int == 3)
            #expect(changed.json["own"] as? [String] == ["webhooks", "rate", "share"])
            for (body, field) in [
                (#"{"webhooks":0}"#, "webhooks"), (#"{"rate":"400/200"}"#, "rate"), (#"{"events_per_order":1}"#, "events_per_order"),
                (#"{"share":0}"#, "share"), (#"{"share":101}"#, "share"),
            ] {
                let refused = try await api.send(.put, "/v1/admin/tenants/default/limits", body: body, rawKey: Self.admin)
                #expect(refused.status == .badRequest, "\(body)")
                #expect(refused.errorDetails["field"] as? String == field)
            }
            #expect(try await api.send(.get, "/v1/admin/tenants/default/limits", as: .pos).status == .forbidden)
            #expect(try await api.send(.put, "/v1/admin/tenants/nowhere/limits", body: "{}", rawKey: Self.admin).errorCode == "unknown_tenant")
        }
    }

    @Test("a tenant's own admin key may read its limits but not raise them")
    func onlyTheOperatorSetsLimits() async throws {
        try await APIHarness.run { api, _ in
            let harbor = try await TenantAPITests.harbor(api)
            let own = TenantAPITests.bearer(harbor.admin)
            #expect(try await api.send(.get, "/v1/admin/tenants/harbor/limits", rawKey: own).status == .ok)
            let raised = try await api.send(.put, "/v1/admin/tenants/harbor/limits", body: #"{"tokens_per_customer":1000}"#, rawKey: own)
            #expect(raised.status == .forbidden)
            #expect(try await api.send(.get, "/v1/admin/tenants/harbor/limits", rawKey: own).json["tokens_per_customer"] as? Int == 20)
        }
    }

    @Test("past its burst a key is answered 429 with Retry-After, other callers are not, and the allowance refills on the clock")
    func rateLimit() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let dependencies = APIHarness.dependencies(try APIHarness.process(
                pool: db.pool, clock: clock.crema,
                limits: TenantLimits(tokensPerCustomer: 20, streamsPerKey: 64, webhooks: 20, eventsPerOrder: 64, rate: .limited(RequestRate(perSecond: 2, burst: 3)!))))
            let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: Logger(label: "test"))
            try await app.test(.router) { client in
                let api = APIClient(client: client)
                for _ in 0..<3 { #expect(try await api.send(.get, "/v1/orders", as: .pos).status != .tooManyRequests) }
                let refused = try await api.send(.get, "/v1/orders", as: .pos)
                #expect(refused.status == .tooManyRequests)
                #expect(refused.errorCode == "rate_limited")
                #expect(refused.headers[.retryAfter] == "1")
                // Another key has its own allowance; an unauthenticated request is not counted against anyone.
                #expect(try await api.send(.get, "/v1/orders", as: .barista).status != .tooManyRequests)
                #expect(try await api.send(.get, "/v1/orders").status == .unauthorized)
                await clock.advance(0.5)
                #expect(try await api.send(.get, "/v1/orders", as: .pos).status != .tooManyRequests)
                #expect(try await api.send(.get, "/v1/orders", as: .pos).status == .tooManyRequests)
                let metrics = try await api.send(.get, "/metrics")
                #expect(metrics.text.contains(#"crema_limits_refusals_total{limit="rate"} 2"#))
            }
        }
    }

    @Test("a key past its rate is answered 429 before its body is read: one past the body limit, or one that never ends")
    func rateLimitBeforeTheBody() async throws {
        try await TestDatabase.with { db in
            let clock = TestClock(Date())
            let dependencies = APIHarness.dependencies(try APIHarness.process(
                pool: db.pool, clock: clock.crema,
                limits: TenantLimits(tokensPerCustomer: 20, streamsPerKey: 64, webhooks: 20, eventsPerOrder: 64, rate: .limited(RequestRate(perSecond: 1, burst: 1)!))))
            try await LiveServer.serve(dependencies) { port in
                let server = LiveServer(port: port, registry: dependencies.registry, db: db)
                /// A `POST /v1/orders` by the pos key announcing `length` bytes of body, of which it sends `sent`.
                func post(length: Int, sent: Int) -> String {
                    "POST /v1/orders HTTP/1.1\r\nHost: crema\r\nAuthorization: Bearer \(APIHarness.keys[.pos]!)\r\nIdempotency-Key: k-\(length)\r\n"
                        + "Content-Type: application/json\r\nContent-Length: \(length)\r\n\r\n" + String(repeating: " ", count: sent)
                }
                func answer(_ request: String) async throws -> String {
                    try await server.connect().executeThenClose { inbound, outbound in
                        var iterator = inbound.makeAsyncIterator()
                        return try await LiveServer.exchange(request, outbound, &iterator)
                    }
                }
                let overLimit = 70 * 1024
                // Within its rate (its one request), the key's body is read, and refused past the body limit.
                let read = try await answer(post(length: overLimit, sent: overLimit))
                #expect(read.hasPrefix("HTTP/1.1 413"), "\(read.prefix(200))")
                // Past its rate, the same body is not read: 429, not 413.
                let whole = try await answer(post(length: overLimit, sent: overLimit))
                #expect(whole.hasPrefix("HTTP/1.1 429"), "\(whole.prefix(200))")
                #expect(LiveServer.errorCode(whole) == "rate_limited")
                // A body that never ends is answered at once: were it read first, the answer would wait for the read
                // deadline (and be no 429).
                let endless = try await answer(post(length: 1_000_000, sent: 100))
                #expect(endless.hasPrefix("HTTP/1.1 429"), "\(endless.prefix(200))")
                #expect(server.metric(#"crema_limits_refusals_total{limit="rate"}"#) == 2)
            }
        }
    }

    @Test("a tenant's webhook endpoints past its limit are refused, and a deleted one frees its place")
    func webhooksPerTenant() async throws {
        try await WebhookHarness.run(registersPrivate: false) { h in
            try await Self.setLimits(h.api, #"{"webhooks":1}"#)
            let body = #"{"url":"\#(WebhookAPITests.publicURL)","events":["order.changed"]}"#
            let first = try await h.api.post("/v1/webhooks", as: .pos, body)
            #expect(first.status == .created, "\(first.text)")
            let second = try await h.api.post("/v1/webhooks", as: .pos, body)
            #expect(second.status == .conflict)
            #expect(second.errorDetails["limit"] as? String == "webhooks")
            let id = try #require(first.json["id"] as? String)
            #expect(try await h.api.send(.delete, "/v1/webhooks/\(id)", as: .pos).status == .noContent)
            #expect(try await h.api.post("/v1/webhooks", as: .pos, body).status == .created)
        }
    }

    @Test("a key's streams past its limit are refused, tickets it asked for included, while another key streams on")
    func streamsPerKey() async throws {
        try await StreamHarness.run { h in
            try await Self.setLimits(h.api, #"{"streams_per_key":2}"#)
            try await h.api.createStore()
            let first = try await h.open(as: .dashboard)
            let second = try await h.open(as: .dashboard)
            let third = try await h.api.send(.get, "/v1/stream?store=market-st", as: .dashboard)
            #expect(third.status == .conflict)
            #expect(third.errorDetails["limit"] as? String == "streams_per_key")
            let ticket = try await h.api.post("/v1/stream/tickets", as: .dashboard, #"{"store_id":"market-st"}"#)
            let byTicket = try await h.status(as: nil, ticket: try #require(ticket.json["ticket"] as? String))
            #expect(byTicket == 409)
            try await Self.setLimits(h.api, #"{"streams_per_key":3}"#)
            let fourth = try await h.open(as: .dashboard)
            first.close()
            second.close()
            fourth.close()
        }
    }
}
