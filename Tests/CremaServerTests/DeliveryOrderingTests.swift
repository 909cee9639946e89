import HTTPTypes
import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaCore
import CremaTestSupport
import Foundation
import Testing

/// Issue #11: a push-started activity the app registers is followed to its end, and nothing reaches an activity
/// after its end, even when the older push was failing, in flight, or held by another dispatcher when the order
/// finished. API → outbox → dispatchers → APNs client → simulator, with the simulator's fault injection.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DeliveryOrderingTests {
    typealias H = DeliveryHarness

    func row(_ h: H, _ id: String, event: String) async throws -> [String: Any]? {
        try await h.deliveries(id).last { $0["live_activity_event"] as? String == event && $0["state"] as? String != "skipped" }
    }

    @Test("push-to-start, the app registers the activity's token from the push with its customer JWT, then started at 5, ready at 10 with an alert, and the end")
    func pushStartedActivityIsFollowedToItsEnd() async throws {
        try await H.run { h in
            let startToken = H.token(40, length: 80)
            let activityToken = H.token(41, length: 80)
            try await h.registerCustomer("c-follow", kind: "push-to-start", token: startToken)
            let id = try await h.place(customer: "c-follow")
            #expect(try await h.drained(id))

            // What the app sees: the start, with the order's identity next to `aps` and in the attributes.
            let starts = h.accepted(startToken)
            try #require(starts.count == 1)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(starts[0].record.body.utf8)) as? [String: Any])
            let crema = try #require(body["crema"] as? [String: Any])
            let orderID = try #require(crema["order_id"] as? String)
            #expect(orderID == id)
            #expect(crema["store_id"] as? String == "market-st")
            #expect(crema["number"] as? Int != nil)
            let attributes = try #require(starts[0].aps["attributes"] as? [String: Any])
            #expect(attributes["orderID"] as? String == orderID)
            #expect(attributes["storeID"] as? String == "market-st")
            #expect(attributes["orderNumber"] as? Int == crema["number"] as? Int)
            #expect(starts[0].aps["input-push-token"] as? Int == 1)

            // The app registers the update token ActivityKit handed it, under the order id it read, as the customer
            // (its brand's backend issued the JWT), not with a shared key.
            let jwt = "Bearer \(try await CustomerTokenFixtures.token(for: "c-follow"))"
            let registered = try await h.api.send(
                .put, "/v1/me/orders/\(orderID)/live-activity-token", body: #"{"token":"\#(activityToken)","environment":"sandbox"}"#,
                rawKey: jwt)
            #expect(registered.status == .created)
            for event in [#"{"type":"started","barista":"Sam"}"#, #"{"type":"ready","pickup_point":"counter"}"#, #"{"type":"picked_up"}"#] {
                try await h.event(id, event)
                #expect(try await h.drained(id))
            }
            let pushes = h.accepted(activityToken)
            try #require(pushes.count == 3)
            #expect(pushes.map { $0.aps["event"] as? String } == ["update", "update", "end"])
            #expect(pushes.map(\.record.priority) == ["5", "10", "5"])
            #expect(pushes.map { $0.aps["alert"] != nil } == [false, true, false])
            #expect((pushes[1].aps["content-state"] as? [String: Any])?["status"] as? String == "ready")
            #expect(pushes[2].aps["dismissal-date"] != nil)
            for push in pushes {
                let object = try JSONSerialization.jsonObject(with: Data(push.record.body.utf8)) as? [String: Any]
                #expect((object?["crema"] as? [String: Any])?["order_id"] as? String == orderID)
            }
            // One activity, one clock: the updates' timestamps continue from the start's.
            let stamps = ([starts[0]] + pushes).compactMap { ($0.aps["timestamp"] as? NSNumber)?.int64Value }
            #expect(stamps.count == 4)
            #expect(stamps == stamps.sorted())
            // Nothing more went to the push-to-start token.
            #expect(h.accepted(startToken).count == 1)
        }
    }

    @Test("a cancel while the start is failing with 503s: the start is withdrawn, never accepted, nothing after the end", arguments: [1, 2])
    func cancelWhileTheStartFails(dispatchers: Int) async throws {
        try await H.run(dispatchers: dispatchers) { h in
            let startToken = H.token(42, length: 80)
            try await h.registerCustomer("c-cancel", kind: "push-to-start", token: startToken)
            // Every attempt is refused; the first is also held until the cancel has landed, so it is in flight then.
            h.simulator.inject(.hold(count: 1, token: startToken))
            h.simulator.inject(.status(503, reason: "ServiceUnavailable", retryAfter: 1, count: 1_000, token: startToken))
            let id = try await h.place(customer: "c-cancel")
            // The first attempt has reached APNs (and is held there) before the cancel is posted.
            await h.simulator.received(token: startToken)
            try await h.event(id, #"{"type":"canceled","reason":"left"}"#)
            #expect(h.simulator.releaseHeld() == 1)
            #expect(try await h.drained(id))
            // APNs recovers: there is nothing left to send.
            h.simulator.clearFaults()
            let start = try #require(try await row(h, id, event: "start"))
            #expect(start["state"] as? String == "superseded")
            #expect((start["attempts"] as? Int ?? 0) < 8)
            #expect(h.accepted(startToken).isEmpty)
            #expect(h.simulator.records(token: startToken).allSatisfy { $0.status == 503 })
            let log = try await h.deliveries(id)
            #expect(log.contains { $0["reason_code"] as? String == "start_not_useful" })
            #expect(!log.contains { $0["state"] as? String == "pending" || $0["state"] as? String == "inflight" })
        }
    }

    @Test("a newer state withdraws the pending update in the event's own transaction, before any dispatcher claims it")
    func aNewerStateWithdrawsThePendingUpdateAtCommit() async throws {
        try await H.run(dispatchHeld: true) { h in
            let activityToken = H.token(44, length: 80)
            let id = try await h.place(customer: "c-newer")
            try await h.registerActivity(id, token: activityToken)
            try await h.event(id, #"{"type":"started","barista":"Sam"}"#)
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            // No dispatcher has run: only the ready event's plan can have withdrawn the started update.
            let updates = try await h.deliveries(id).filter { $0["live_activity_event"] as? String == "update" }
            let started = try #require(updates.first { $0["order_event"] as? String == "started" })
            let ready = try #require(updates.first { $0["order_event"] as? String == "ready" })
            #expect(started["state"] as? String == "superseded")
            #expect(ready["state"] as? String == "pending")
            h.startDispatching()
            #expect(try await h.drained(id))
            let pushes = h.accepted(activityToken)
            #expect(pushes.count == 1)
            #expect(pushes.first.map { ($0.aps["content-state"] as? [String: Any])?["status"] as? String } == "ready")
        }
    }

    @Test("an update in flight when the order is canceled never reaches the activity after its end", arguments: [1, 2])
    func updateInFlightAtTheEnd(dispatchers: Int) async throws {
        try await H.run(dispatchers: dispatchers) { h in
            let activityToken = H.token(43, length: 80)
            let id = try await h.place(customer: "c-inflight")
            try await h.registerActivity(id, token: activityToken)
            try await h.event(id, #"{"type":"started","barista":"Sam"}"#)
            #expect(try await h.drained(id))
            // The ready update is held at APNs and then refused; meanwhile the order is canceled.
            h.simulator.inject(.hold(count: 1, token: activityToken))
            h.simulator.inject(.status(503, reason: "ServiceUnavailable", retryAfter: nil, count: 1, token: activityToken))
            let sentBefore = h.simulator.records(token: activityToken).count
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            // The ready update has reached APNs and is held there: in flight when the cancel is posted.
            await h.simulator.received(token: activityToken, count: sentBefore + 1)
            try await h.event(id, #"{"type":"canceled","reason":"left"}"#)
            #expect(h.simulator.releaseHeld() == 1)
            #expect(try await h.drained(id))

            let pushes = h.accepted(activityToken)
            #expect(pushes.map { $0.aps["event"] as? String } == ["update", "end"])
            #expect(pushes.last.map { ($0.aps["content-state"] as? [String: Any])?["status"] as? String } == "canceled")
            let stamps = pushes.compactMap { ($0.aps["timestamp"] as? NSNumber)?.int64Value }
            #expect(stamps == stamps.sorted())
            let ready = try #require(try await h.deliveries(id).first { $0["order_event"] as? String == "ready" && $0["live_activity_event"] as? String == "update" })
            #expect(ready["state"] as? String == "superseded")
            #expect(ready["reason_code"] as? String == "superseded_by_end")
        }
    }

    @Test("random orders, interleaved without waiting, under 503s and held requests, two dispatchers: every activity ends last, in order")
    func randomOrdersUnderFaults() async throws {
        try await H.run(dispatchers: 2) { h in
            var random = SeededGenerator(seed: 2026)
            var orders: [(id: String, token: String, state: String)] = []
            for n in 0..<12 {
                let token = H.token(UInt8(100 + n), length: 80)
                let id = try await h.place(customer: "c-random-\(n)")
                try await h.registerActivity(id, token: token)
                h.simulator.inject(.status(503, reason: "ServiceUnavailable", retryAfter: nil, count: Int.random(in: 0...3, using: &random), token: token))
                orders.append((id, token, "queued"))
            }
            h.simulator.inject(.latency(milliseconds: 200, count: 6))
            // Every order moves on at random until it is finished; no step waits for a push.
            while let index = orders.indices.filter({ !["picked_up", "canceled"].contains(orders[$0].state) }).randomElement(using: &random) {
                let next: [(String, String)] = switch orders[index].state {
                case "queued": [("started", #"{"type":"started","barista":"Sam"}"#), ("ready", #"{"type":"ready","pickup_point":"counter"}"#), ("canceled", #"{"type":"canceled","reason":"left"}"#)]
                case "preparing": [("ready", #"{"type":"ready","pickup_point":"counter"}"#), ("canceled", #"{"type":"canceled","reason":"left"}"#)]
                default: [("picked_up", #"{"type":"picked_up"}"#), ("canceled", #"{"type":"canceled","reason":"left"}"#)]
                }
                let (event, body) = next.randomElement(using: &random)!
                try await h.event(orders[index].id, body)
                orders[index].state = event == "started" ? "preparing" : event
            }
            for order in orders { #expect(try await h.drained(order.id)) }

            for order in orders {
                let pushes = h.accepted(order.token)
                let events = pushes.map { $0.aps["event"] as? String ?? "-" }
                // Nothing after the end, and the end carries the order's final state.
                #expect(events.last == "end", "\(order.id): \(events)")
                #expect(events.filter { $0 == "end" }.count == 1, "\(order.id): \(events)")
                let final = (pushes.last?.aps["content-state"] as? [String: Any])?["status"] as? String
                #expect(final == order.state, "\(order.id): ended as \(final ?? "-")")
                let stamps = pushes.compactMap { ($0.aps["timestamp"] as? NSNumber)?.int64Value }
                #expect(stamps == stamps.sorted(), "\(order.id): \(stamps)")
            }
        }
    }
}
