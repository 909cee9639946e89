import Foundation
import HTTPTypes
import Testing

/// The app's reconciliation read, end to end: what `GET /v1/me/orders/{id}` reports as last delivered is
/// exactly what the simulator accepted for the activity's token.
@Suite(.serialized) struct CustomerDeliveryTests {
    typealias H = DeliveryHarness

    @Test("the order's last delivered content state is the one the simulator accepted, through to the end")
    func lastDeliveredMatchesTheSimulator() async throws {
        try await H.run { h in
            let activity = H.token(41, length: 64)
            let id = try await h.place(customer: "c-me")
            let jwt = "Bearer \(try await CustomerTokenFixtures.token(for: "c-me"))"
            let registered = try await h.api.send(
                .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(activity)","environment":"sandbox"}"#, rawKey: jwt)
            #expect(registered.status == .created)

            let before = try await h.api.send(.get, "/v1/me/orders/\(id)", rawKey: jwt)
            #expect(before.json["last_delivered"] is NSNull)

            for (body, event) in [
                (#"{"type":"started","barista":"Sam"}"#, "update"), (#"{"type":"ready","pickup_point":"counter"}"#, "update"),
                (#"{"type":"picked_up"}"#, "end"),
            ] {
                try await h.event(id, body)
                #expect(try await h.drained(id))
                let sent = try #require(h.accepted(activity).last)
                let answer = try await h.api.send(.get, "/v1/me/orders/\(id)", rawKey: jwt)
                let delivered = try #require(answer.json["last_delivered"] as? [String: Any])
                #expect(delivered["event"] as? String == event)
                #expect(delivered["timestamp"] as? Int == (sent.aps["timestamp"] as? NSNumber)?.intValue)
                let reported = try JSONSerialization.data(withJSONObject: delivered["content_state"] as Any, options: .sortedKeys)
                // What APNs accepted carries the push's receipt, which the reconciliation read leaves out (it is the
                // push's, not the state's).
                var acceptedState = try #require(sent.aps["content-state"] as? [String: Any])
                #expect(acceptedState.removeValue(forKey: "receipt") != nil)
                let accepted = try JSONSerialization.data(withJSONObject: acceptedState, options: .sortedKeys)
                #expect(reported == accepted)
                if event == "end" { #expect(delivered["dismissal_date"] as? Int != nil) }
            }
        }
    }
}
