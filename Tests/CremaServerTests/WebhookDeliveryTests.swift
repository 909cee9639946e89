import CremaCore
import CremaPostgres
import CremaService
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Webhooks end to end: the real application and dispatcher, a real database, real receivers over HTTP and HTTPS, and
/// a clock the test moves for the backoff (docs/webhooks.md).
@Suite(.serialized) struct WebhookDeliveryTests {
    static let started = #"{"type":"started","barista":"Sam"}"#
    static let ready = #"{"type":"ready","pickup_point":"counter"}"#
    static let pickedUp = #"{"type":"picked_up"}"#

    /// Rows due at the harness clock or in flight: the dispatcher has not caught up with the clock yet.
    static func unsettled(_ h: WebhookHarness) async throws -> Int {
        try await h.db.scalar(
            "SELECT count(*) FROM webhook_deliveries WHERE state = 'inflight' OR (state = 'pending' AND run_at <= \(h.clock.now))", as: Int.self)
    }

    @Test("A receiver over HTTPS verifies every signature and sees each order.changed of a lifecycle exactly once after deduplication")
    func lifecycleArrivesSignedAndOnce() async throws {
        try await WebhookHarness.run { h in
            let receiver = try await h.receiver(https: true)
            let (_, secret) = try await h.register(receiver.url())
            let id = try await h.lifecycle([Self.started, Self.ready, Self.pickedUp])
            #expect(try await h.eventually { receiver.deduplicated.count >= 4 }, "got \(receiver.requests.count) requests")
            let changes = receiver.deduplicated
            #expect(changes.allSatisfy { $0.eventType == "order.changed" }, "only the subscribed type is sent")
            let orders = changes.compactMap { ($0.json["data"] as? [String: Any])?["order"] as? [String: Any] }
            #expect(orders.compactMap { $0["version"] as? Int }.sorted() == [1, 2, 3, 4])
            #expect(Set(orders.compactMap { $0["state"] as? String }) == ["queued", "preparing", "ready", "picked_up"])
            #expect(orders.allSatisfy { $0["id"] as? String == id })
            for request in receiver.requests {
                let signature = try #require(request.headers["crema-signature"])
                #expect(WebhookSecret.verify(header: signature, secret: secret, body: request.body, now: h.clock.now))
                #expect(request.json["id"] as? String == request.eventID, "the header names the body's event")
                // What a receiver refuses: a replay past five minutes, another secret, a changed body.
                #expect(!WebhookSecret.verify(header: signature, secret: secret, body: request.body, now: h.clock.now.addingTimeInterval(301)))
                #expect(!WebhookSecret.verify(header: signature, secret: secret + "0", body: request.body, now: h.clock.now))
                #expect(!WebhookSecret.verify(header: signature, secret: secret, body: request.body + Data(" ".utf8), now: h.clock.now))
            }
            // The receiver has the requests before the dispatcher records their outcome.
            let endpoint = try await Self.endpointID(h)
            #expect(try await h.eventually { try await h.deliveries(endpoint).allSatisfy { $0.state == "sent" && $0.attempts == 1 } })
            try await receiver.stop()
        }
    }

    @Test("A receiver that fails for two minutes and then recovers gets every event in the end, each under one event id")
    func failingReceiverRecovers() async throws {
        try await WebhookHarness.run { h in
            let receiver = try await h.receiver()
            receiver.answer(.status(500))
            let (endpoint, _) = try await h.register(receiver.url())
            _ = try await h.lifecycle([Self.started, Self.ready])
            #expect(try await h.eventually { try await h.settled(endpoint, count: 3) })
            // Two minutes of failures, tried on the backoff's schedule (10 s, 20 s, 40 s, 80 s: the jitter is fixed at its top).
            for _ in 0..<4 {
                await h.clock.advance(30)
                #expect(try await h.eventually { try await Self.unsettled(h) == 0 })
            }
            let failed = receiver.requests.count
            #expect(failed >= 9, "three events, each tried at least three times while failing: \(failed)")
            #expect(try await h.deliveries(endpoint).allSatisfy { $0.state == "pending" })
            receiver.answer(.status(200))
            await h.clock.advance(3600)
            #expect(try await h.eventually { try await h.deliveries(endpoint).allSatisfy { $0.state == "sent" } })
            #expect(receiver.deduplicated.count == 3)
            #expect(Set(receiver.requests.map(\.eventID)).count == 3, "retries carry the same event id")
            try await receiver.stop()
        }
    }

    @Test("A receiver that never recovers ends dead after the documented ten attempts, and a replay sends the same event again")
    func deadDeliveryIsReplayed() async throws {
        try await WebhookHarness.run { h in
            let receiver = try await h.receiver()
            receiver.answer(.status(503))
            let (endpoint, _) = try await h.register(receiver.url())
            _ = try await h.lifecycle()
            #expect(try await h.eventually { try await h.settled(endpoint, count: 1) })
            var steps = 0
            while try await h.deliveries(endpoint).first?.state != "dead", steps < 15 {
                await h.clock.advance(3600)
                #expect(try await h.eventually { try await Self.unsettled(h) == 0 })
                steps += 1
            }
            let dead = try #require(try await h.deliveries(endpoint).first)
            #expect(dead.state == "dead")
            #expect(dead.attempts == WebhookPolicy().retry.maxAttempts)
            #expect(receiver.requests.count == 10)
            let log = try await h.api.send(.get, "/v1/webhooks/\(endpoint)/deliveries", as: .pos)
            let entry = try #require((log.json["deliveries"] as? [[String: Any]])?.first)
            #expect(entry["state"] as? String == "dead")
            #expect(entry["last_status"] as? Int == 503)
            #expect((entry["last_error"] as? String)?.contains("gave up after 10 attempts") == true)
            let deliveryID = try #require(entry["id"] as? Int)

            receiver.answer(.status(204))
            let replay = try await h.api.post("/v1/webhooks/\(endpoint)/deliveries/\(deliveryID)/replay", as: .pos, "")
            #expect(replay.status == .accepted, "\(replay.text)")
            #expect(replay.json["state"] as? String == "pending")
            #expect(replay.json["replays"] as? Int == 1)
            #expect(try await h.eventually { try await h.deliveries(endpoint).first?.state == "sent" })
            #expect(receiver.requests.count == 11)
            #expect(Set(receiver.requests.map(\.eventID)).count == 1, "the replay is the same event")
            let again = try await h.api.post("/v1/webhooks/\(endpoint)/deliveries/\(deliveryID)/replay", as: .pos, "")
            #expect(again.status == .conflict)
            #expect(again.errorCode == "webhook_delivery_not_dead")
            try await receiver.stop()
        }
    }

    @Test("A receiver answering 410 Gone is disabled: it gets nothing more, and its deliveries cannot be replayed")
    func goneDisablesTheEndpoint() async throws {
        try await WebhookHarness.run { h in
            let receiver = try await h.receiver()
            receiver.answer(.status(410))
            let (endpoint, _) = try await h.register(receiver.url())
            _ = try await h.lifecycle()
            #expect(try await h.eventually { try await h.deliveries(endpoint).first?.state == "dead" })
            let shown = try await h.api.send(.get, "/v1/webhooks/\(endpoint)", as: .pos)
            #expect(shown.json["disabled_at"] is String)
            _ = try await h.lifecycle([Self.started])
            #expect(try await h.deliveries(endpoint).count == 1, "a disabled endpoint is not written to")
            #expect(receiver.requests.count == 1)
            let log = try await h.api.send(.get, "/v1/webhooks/\(endpoint)/deliveries", as: .pos)
            let deliveryID = try #require(((log.json["deliveries"] as? [[String: Any]])?.first)?["id"] as? Int)
            let replay = try await h.api.post("/v1/webhooks/\(endpoint)/deliveries/\(deliveryID)/replay", as: .pos, "")
            #expect(replay.status == .conflict)
            #expect(replay.errorCode == "webhook_disabled")
            try await receiver.stop()
        }
    }

    @Test("A receiver that never answers holds only its own deliveries: another endpoint gets every event meanwhile")
    func hangingReceiverHoldsOnlyItself() async throws {
        try await WebhookHarness.run(requestTimeout: 2) { h in
            let slow = try await h.receiver()
            slow.answer(.hang)
            let fast = try await h.receiver()
            let (slowID, _) = try await h.register(slow.url())
            let (fastID, _) = try await h.register(fast.url())
            _ = try await h.lifecycle([Self.started, Self.ready])
            #expect(try await h.eventually { fast.deduplicated.count == 3 })
            #expect(try await h.eventually { try await h.deliveries(fastID).allSatisfy { $0.state == "sent" } })
            // The hanging one's requests time out and wait for their retry.
            #expect(try await h.eventually { try await h.deliveries(slowID).allSatisfy { $0.state == "pending" && $0.attempts == 1 } })
            let errors = try await h.db.pool.withConnection { connection in
                try await connection.query("SELECT last_error FROM webhook_deliveries WHERE endpoint_id = \(UUID(uuidString: slowID)!)")
                    .map { try $0.decode("last_error", as: String.self) }
            }
            #expect(errors.allSatisfy { $0.contains("no answer within 2 s") }, "\(errors)")
            try await slow.stop()
            try await fast.stop()
        }
    }

    @Test("The address is checked again at send time: a receiver that is private when sent to gets nothing, and the attempt says why")
    func addressIsCheckedWhenSending() async throws {
        try await WebhookHarness.run(sendsToPrivate: false) { h in
            let receiver = try await h.receiver()
            let (endpoint, _) = try await h.register(receiver.url())
            _ = try await h.lifecycle()
            #expect(try await h.eventually { try await h.settled(endpoint, count: 1) })
            let error = try await h.db.scalar("SELECT last_error FROM webhook_deliveries", as: String.self)
            #expect(error.contains("private, loopback or reserved"), "\(error)")
            #expect(receiver.requests.isEmpty)
            try await receiver.stop()
        }
    }

    @Test("activity.ended is told once when an order ends, with how it ended; an endpoint for it alone gets no order.changed")
    func activityEndedIsTold() async throws {
        try await WebhookHarness.run { h in
            let receiver = try await h.receiver()
            _ = try await h.register(receiver.url(), events: ["activity.ended"])
            let id = try await h.lifecycle([Self.started])
            let canceled = try await h.api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"canceled","reason":"out of oat milk"}"#)
            #expect(canceled.status == .ok)
            #expect(try await h.eventually { receiver.deduplicated.count == 1 })
            let request = try #require(receiver.deduplicated.first)
            #expect(request.eventType == "activity.ended")
            let activity = try #require((request.json["data"] as? [String: Any])?["activity"] as? [String: Any])
            #expect(activity["order_id"] as? String == id)
            #expect(activity["state"] as? String == "canceled")
            #expect(activity["ended_by"] as? String == "canceled")
            try await receiver.stop()
        }
    }

    static func endpointID(_ h: WebhookHarness) async throws -> String {
        try await h.db.scalar("SELECT endpoint_id::text FROM webhook_endpoints LIMIT 1", as: String.self)
    }
}
