import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaCore
import Foundation
import HTTPTypes
import Testing

/// Issue #4's "done when", end to end: API → event transaction → outbox → dispatcher → APNs client →
/// simulator over HTTP/2 + TLS, and the deliveries endpoint explaining each decision.
@Suite(.serialized) struct DeliveryFlowTests {
    typealias H = DeliveryHarness

    @Test("a running Live Activity gets routine updates at priority 5, ready at 10 with an alert, and an end with a dismissal date")
    func runningActivity() async throws {
        try await H.run { h in
            let activity = H.token(1, length: 80)
            let alert = H.token(2)
            let widget = H.token(3)
            try await h.registerCustomer("c-la", kind: "alert", token: alert)
            try await h.registerCustomer("c-la", kind: "widget", token: widget)
            let id = try await h.place(customer: "c-la")
            try await h.registerActivity(id, token: activity)
            // Each step waits for the previous push: an update still unsent when the next change commits is
            // superseded by it (only the newest state matters), which is not what this test is about.
            for body in [#"{"type":"started","barista":"Sam"}"#, #"{"type":"ready","pickup_point":"counter"}"#, #"{"type":"picked_up"}"#] {
                try await h.event(id, body)
                #expect(try await h.drained(id))
            }

            let pushes = h.accepted(activity)
            try #require(pushes.count == 3)
            #expect(pushes.map { $0.aps["event"] as? String } == ["update", "update", "end"])
            #expect(pushes.map(\.record.priority) == ["5", "10", "5"])
            #expect(pushes.map { $0.aps["alert"] != nil } == [false, true, false])
            #expect(pushes.map(\.record.topic) == Array(repeating: "\(H.bundleID).push-type.liveactivity", count: 3))
            #expect(pushes[2].aps["dismissal-date"] != nil)
            let stamps: [Int64] = pushes.compactMap { push in (push.aps["timestamp"] as? NSNumber)?.int64Value }
            #expect(stamps.count == 3)
            #expect(stamps == stamps.sorted())
            #expect(Set(stamps).count == 3)
            #expect((pushes[1].aps["content-state"] as? [String: Any])?["status"] as? String == "ready")

            // The activity carried the news: the alert token heard nothing. The widget reloaded once at placement;
            // ready and pickup fell inside its 5-minute interval: one trailing push waits, pickup coalesced into it.
            #expect(h.simulator.records(token: alert).isEmpty)
            #expect(h.accepted(widget).count == 1)
            let log = try await h.deliveries(id)
            let codes: [String] = log.map { entry in
                let event = entry["order_event"] as? String ?? "-"
                let code = entry["reason_code"] as? String ?? "-"
                let state = entry["state"] as? String ?? "-"
                return "\(event):\(code):\(state)"
            }
            #expect(codes.contains("placed:widget_changed:sent"))
            #expect(codes.contains("started:activity_update:sent"))
            #expect(codes.contains("ready:activity_update_urgent:sent"))
            #expect(codes.contains("ready:alert_shown_in_activity:skipped"))
            #expect(codes.contains("ready:widget_deferred:pending"))
            #expect(codes.contains("picked_up:activity_end:sent"))
            #expect(codes.contains("picked_up:widget_coalesced:skipped"))
            let sent = log.filter { $0["state"] as? String == "sent" }
            for row in sent {
                #expect(row["apns_status"] as? Int == 200)
                #expect(row["apns_id"] is String)
                #expect(row["attempts"] as? Int == 1)
            }
            #expect(log.allSatisfy { ($0["reason"] as? String)?.isEmpty == false })
        }
    }

    @Test("with only a push-to-start token the order starts a Live Activity, once")
    func pushToStart() async throws {
        try await H.run { h in
            let token = H.token(4, length: 80)
            try await h.registerCustomer("c-p2s", kind: "push-to-start", token: token)
            let id = try await h.place(customer: "c-p2s")
            #expect(try await h.drained(id))
            try await h.event(id, #"{"type":"started","barista":"Sam"}"#)
            #expect(try await h.drained(id))
            let pushes = h.accepted(token)
            try #require(pushes.count == 1)
            #expect(pushes[0].aps["event"] as? String == "start")
            #expect(pushes[0].aps["attributes-type"] as? String == "OrderActivityAttributes")
            #expect(pushes[0].aps["attributes"] is [String: Any])
            #expect(pushes[0].aps["alert"] is [String: Any])
            #expect(pushes[0].record.priority == "10")
            let codes = try await h.deliveries(id).compactMap { $0["reason_code"] as? String }
            #expect(codes == ["activity_start", "activity_start_pending"])
        }
    }

    @Test("with no Live Activity the customer gets one alert, at ready, and nothing else")
    func alertOnly() async throws {
        try await H.run { h in
            let token = H.token(5)
            try await h.registerCustomer("c-alert", kind: "alert", token: token)
            let id = try await h.place(customer: "c-alert")
            for body in [#"{"type":"started","barista":"Sam"}"#, #"{"type":"ready","pickup_point":"counter"}"#, #"{"type":"picked_up"}"#] {
                try await h.event(id, body)
            }
            #expect(try await h.drained(id))
            let pushes = h.accepted(token)
            try #require(pushes.count == 1)
            #expect(pushes[0].record.pushType == "alert")
            #expect(pushes[0].record.priority == "10")
            #expect(pushes[0].record.topic == H.bundleID)
            #expect(pushes[0].aps["interruption-level"] as? String == "time-sensitive")
        }
    }

    @Test("the metrics count pushes by type and outcome for anyone, by tenant for the bootstrap admin key only, and show the outbox depth")
    func metrics() async throws {
        try await H.run { h in
            let token = H.token(6)
            try await h.registerCustomer("c-m", kind: "alert", token: token)
            let id = try await h.place(customer: "c-m")
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            #expect(try await h.drained(id))
            let text = try await h.api.send(.get, "/metrics").text
            let sent = text.split(separator: "\n").filter { $0.hasPrefix("crema_apns_pushes_total{") && $0.hasSuffix(" 1") }
            #expect(sent.contains { $0.contains(#"push_type="alert""#) && $0.contains(#"outcome="sent""#) })
            // Which tenants exist is not public: the per-tenant series is for the bootstrap admin key only.
            #expect(!text.contains("tenant=") && !text.contains("crema_apns_tenant_pushes_total"))
            let operatorView = try await h.api.send(.get, "/metrics", rawKey: "Bearer \(APIHarness.adminKey)").text
            let byTenant = operatorView.split(separator: "\n").filter { $0.hasPrefix("crema_apns_tenant_pushes_total{") && $0.hasSuffix(" 1") }
            #expect(byTenant.contains { $0.contains(#"tenant="default""#) && $0.contains(#"push_type="alert""#) && $0.contains(#"outcome="sent""#) })
            #expect(try await h.api.send(.get, "/metrics", as: .pos).text.contains("crema_apns_tenant_pushes_total") == false)
            #expect(text.contains("crema_delivery_commit_to_send_seconds"))
        }
    }
}
