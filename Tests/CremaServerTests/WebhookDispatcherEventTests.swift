import CremaAPNsSimulator
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

/// The webhook events the APNs dispatcher writes with its outcomes: `delivery.dead` for a push that died and
/// `token.retired` for a token APNs said is gone, in the same statement, for the endpoints that want them.
@Suite struct WebhookDispatcherEventTests {
    typealias H = DeliveryHarness

    /// An endpoint of the default tenant for `events` (the harness runs no webhook dispatcher: nothing is sent).
    static func subscribe(_ h: H, _ events: [String]) async throws {
        try await h.db.pool.withConnection { connection in
            _ = try await connection.query(
                """
                INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, sealed_secret, created_at)
                VALUES ('default', gen_random_uuid(), 'https://93.184.215.14/hooks', \(PostgresTextArray(events))::text[], '\\x00', now())
                """)
        }
    }

    static func bodies(_ h: H, type: String) async throws -> [[String: Any]] {
        let texts = try await h.db.pool.withConnection { connection in
            try await connection.query("SELECT body::text FROM webhook_events WHERE event_type = \(type) ORDER BY created_at")
                .map { try $0.decode("body", as: String.self) }
        }
        return texts.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] ?? [:] }
    }

    @Test("A 410 for a customer's token writes token.retired (token cut to 8 characters) and delivery.dead, each with one delivery")
    func retiredTokenAndDeadPushAreTold() async throws {
        try await H.run { h in
            try await Self.subscribe(h, ["token.retired", "delivery.dead"])
            let token = H.token(21)
            h.simulator.inject(.unregistered(token: token, since: Date().addingTimeInterval(5)))
            let id = try await h.readyAlert(customer: "c-hook", token: token)
            #expect(try await h.drained(id))
            let retired = try await Self.bodies(h, type: "token.retired")
            #expect(retired.count == 1)
            let told = try #require((retired.first?["data"] as? [String: Any])?["token"] as? [String: Any])
            #expect(told["kind"] as? String == "alert")
            #expect(told["token"] as? String == String(token.prefix(8)) + "…")
            #expect(told["customer_ref"] as? String == "c-hook")
            #expect(told["reason"] as? String == "Unregistered")
            let dead = try await Self.bodies(h, type: "delivery.dead")
            #expect(dead.count == 1)
            let delivery = try #require((dead.first?["data"] as? [String: Any])?["delivery"] as? [String: Any])
            #expect(delivery["order_id"] as? String == id)
            #expect(delivery["push_type"] as? String == "alert")
            #expect(delivery["apns_status"] as? Int == 410)
            #expect(dead.first?["type"] as? String == "delivery.dead")
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_deliveries", as: Int.self) == 2)
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_events WHERE strpos(body::text, \(token)) > 0", as: Int.self) == 0)
        }
    }

    @Test("Without an endpoint that wants them, the dispatcher's outcomes write no webhook event")
    func nothingIsWrittenForNobody() async throws {
        try await H.run { h in
            try await Self.subscribe(h, ["order.changed"])
            let token = H.token(22)
            h.simulator.inject(.unregistered(token: token, since: Date().addingTimeInterval(5)))
            let id = try await h.readyAlert(customer: "c-quiet", token: token)
            #expect(try await h.drained(id))
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_events WHERE event_type <> 'order.changed'", as: Int.self) == 0)
            #expect(try await h.db.scalar("SELECT count(*) FROM webhook_events WHERE event_type = 'order.changed'", as: Int.self) == 2)
        }
    }
}
