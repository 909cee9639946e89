import CremaAPI
import CremaCore
import CremaPostgres
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// The app's budget (issue #33, part 6) through the router and PostgreSQL: `frequent_updates` on both Live Activity
/// token routes, shown by `GET /v1/me/orders/{id}`, and what the planner does with it, as the delivery log says.
@Suite(.serialized) struct FrequentUpdatesAPITests {
    static let token = String(repeating: "d4", count: 32)

    static func me(_ api: APIClient, _ method: HTTPRequest.Method, _ uri: String, body: String? = nil) async throws -> APIResponse {
        try await CustomerAPITests.me(api, method, uri, "alice", body: body)
    }

    /// The order's `frequent_updates` as the customer reads it: true, false, or nil for null.
    static func frequentUpdates(_ api: APIClient, _ id: String) async throws -> Bool?? {
        let read = try await me(api, .get, "/v1/me/orders/\(id)")
        #expect(read.status == .ok)
        guard read.json.keys.contains("frequent_updates") else { return nil }
        return .some(read.json["frequent_updates"] as? Bool)
    }

    @Test("frequent updates is stored with each live activity registration and shown on the customer's order") func frequentUpdatesIsStoredWithEachLiveActivityRegistrationAndShownOnTheCustomersOrder() async throws {
        try await APIHarness.run { api, db in
            let id = try await CustomerAPITests.place(api, customer: "alice")
            #expect(try await Self.frequentUpdates(api, id) == .some(nil))

            let off = try await Self.me(
                api, .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(Self.token)","environment":"sandbox","frequent_updates":false}"#)
            #expect(off.status == .created)
            #expect(try await Self.frequentUpdates(api, id) == .some(false))
            #expect(try await db.scalar("SELECT frequent_updates FROM push_targets WHERE retired_at IS NULL", as: Bool.self) == false)

            // Left out, it is Apple's default again: every registration says what the device says now.
            let absent = try await Self.me(api, .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(Self.token)","environment":"sandbox"}"#)
            #expect(absent.status == .ok)
            #expect(try await Self.frequentUpdates(api, id) == .some(true))

            // The app key's route (the brand's backend) takes it too.
            let app = try await api.send(
                .put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(Self.token)","environment":"sandbox","frequent_updates":false}"#)
            #expect(app.status == .ok)
            #expect(try await Self.frequentUpdates(api, id) == .some(false))
            let on = try await Self.me(
                api, .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(Self.token)","environment":"sandbox","frequent_updates":true}"#)
            #expect(on.status == .ok)
            #expect(try await Self.frequentUpdates(api, id) == .some(true))

            let wrong = try await Self.me(
                api, .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(Self.token)","environment":"sandbox","frequent_updates":"no"}"#)
            #expect(wrong.status == .badRequest)
            #expect(wrong.errorCode == "invalid_field")
            #expect(try await Self.frequentUpdates(api, id) == .some(true))
        }
    }

    @Test("with frequent updates off a large delay goes at priority 5 and ready at priority 10 and the delivery log says why") func withFrequentUpdatesOffALargeDelayGoesAtPriority5AndReadyAtPriority10AndTheDeliveryLogSaysWhy() async throws {
        try await APIHarness.run { api, _ in
            let id = try await CustomerAPITests.place(api, customer: "alice")
            let registered = try await Self.me(
                api, .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(Self.token)","environment":"sandbox","frequent_updates":false}"#)
            #expect(registered.status == .created)
            let eta = Date().addingTimeInterval(40 * 60)
            #expect(try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#).status == .ok)
            let delayed = try await api.post(
                "/v1/orders/\(id)/events", as: .pos, #"{"type":"delayed","eta":"\#(WireCoding.rfc3339(eta))","reason":"machine"}"#)
            #expect(delayed.status == .ok)
            #expect(try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"ready","pickup_point":"counter"}"#).status == .ok)

            let log = try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .pos)
            let activity = try #require(log.json["deliveries"] as? [[String: Any]]).filter { $0["target_kind"] as? String == "live_activity" }
            #expect(activity.map { "\($0["order_event"] ?? "")/p\($0["priority"] ?? "")/\($0["reason_code"] ?? "")" } == [
                "started/p5/activity_update_frequent_updates_off",
                "delayed/p5/activity_update_frequent_updates_off",
                "ready/p10/activity_update_urgent",
            ])
        }
    }
}
