import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaServer
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite(.timeLimit(.minutes(2))) struct ProjectionAPITests {
    @Test("each event stores the projection in its own transaction") func eachEventStoresTheProjectionInItsOwnTransaction() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let id = try await api.placeOrder()
            let queued = try await db.scalar("SELECT projection->>'status' FROM orders", as: String.self)
            #expect(queued == "queued")
            _ = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"ready","pickup_point":"counter"}"#)
            let stored = try await db.scalar("SELECT projection::text FROM orders", as: String.self)
            #expect(stored.contains(#""status": "ready""#))
            // A refused event leaves the stored projection as it was.
            _ = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            let after = try await db.scalar("SELECT projection::text FROM orders", as: String.self)
            #expect(after == stored)

            let detail = try await api.send(.get, "/v1/orders/\(id)", as: .dashboard)
            let projection = try #require(detail.json["projection"] as? [String: Any])
            #expect(projection["status"] as? String == "ready")
            #expect(projection["pickupPoint"] as? String != nil)
            // ActivityKit's default decoding: dates are seconds since 2001-01-01, not Unix seconds.
            let eta = try #require(projection["eta"] as? Double)
            #expect(abs(eta - Date().timeIntervalSinceReferenceDate) < 3600)
        }
    }

    @Test("the preview shows every family and every body within 4 KB", arguments: ["en", "es-MX", "ja"]) func thePreviewShowsEveryFamilyAndEveryBodyWithin4KB(_ locale: String) async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let body = APIClient.orderBody().replacingOccurrences(of: #""locale":"es""#, with: #""locale":"\#(locale)""#)
            let placed = try await api.post("/v1/orders", as: .pos, body)
            let id = try #require(placed.json["id"] as? String)
            _ = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"ready","pickup_point":"counter"}"#)
            let preview = try await api.send(.get, "/v1/orders/\(id)/preview", as: .barista)
            #expect(preview.status == .ok)
            #expect(preview.json["state"] as? String == "ready")
            let families = try #require(preview.json["families"] as? [String: Any])
            #expect(Set(families.keys) == ["compactLeading", "compactTrailing", "minimal", "small", "lockScreen"])
            let bodies = try #require(preview.json["bodies"] as? [String: [String: Any]])
            #expect(Set(bodies.keys) == ["liveactivity_update", "liveactivity_start", "alert", "widgets"])
            for (name, entry) in bodies {
                let bytes = try #require(entry["bytes"] as? Int)
                #expect(bytes <= 4096, "\(name)")
                #expect((entry["body"] as? [String: Any])?["aps"] != nil, "\(name)")
            }
            let update = try #require((bodies["liveactivity_update"]?["body"] as? [String: Any])?["aps"] as? [String: Any])
            #expect(update["event"] as? String == "update")
            #expect((update["content-state"] as? [String: Any])?["status"] as? String == "ready")
            #expect(update["alert"] != nil, "ready is worth an alert")
            let start = try #require((bodies["liveactivity_start"]?["body"] as? [String: Any])?["aps"] as? [String: Any])
            #expect(start["attributes-type"] as? String == "OrderActivityAttributes")
        }
    }

    @Test("the preview holds the pushes and skips the last change planned for the order's tokens, and no_targets without any")
    func thePreviewHoldsThePlanOfTheLastChange() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let bare = try await api.placeOrder()
            let none = try await api.send(.get, "/v1/orders/\(bare)/preview", as: .dashboard)
            #expect((none.json["deliveries"] as? [Any])?.isEmpty == true, "\(none.text)")
            #expect((none.json["skips"] as? [[String: Any]])?.map { $0["reason_code"] as? String } == ["no_targets"], "\(none.text)")

            let id = try await api.placeOrder()
            let token = String(repeating: "ab", count: 32)
            let registered = try await api.send(
                .put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(token)","environment":"sandbox"}"#)
            #expect(registered.status.code < 300, "\(registered.text)")
            _ = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"ready","pickup_point":"counter"}"#)
            let preview = try await api.send(.get, "/v1/orders/\(id)/preview", as: .dashboard)
            let log = try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .dashboard)
            // What does not depend on the instant it is asked: the target, the push, its priority and the reason.
            func summary(_ row: [String: Any]) -> String {
                ["target_kind", "push_type", "live_activity_event", "priority", "reason_code", "reason"].map { "\($0)=\(row[$0] ?? "-")" }
                    .joined(separator: " ")
            }
            let written = (log.json["deliveries"] as? [[String: Any]] ?? []).filter { $0["order_version"] as? Int == 2 && $0["state"] as? String == "pending" }
            let planned = preview.json["deliveries"] as? [[String: Any]] ?? []
            #expect(planned.map(summary) == written.map(summary), "\(preview.text)")
            #expect(planned.map { $0["reason_code"] as? String } == ["activity_update_urgent"])
            #expect((preview.json["skips"] as? [Any])?.isEmpty == true, "\(preview.text)")
        }
    }

    @Test("a finished order previews an end") func aFinishedOrderPreviewsAnEnd() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            _ = try await api.post("/v1/orders/\(id)/events", as: .pos, #"{"type":"canceled","reason":"out of oat milk"}"#)
            let preview = try await api.send(.get, "/v1/orders/\(id)/preview", as: .pos)
            let bodies = try #require(preview.json["bodies"] as? [String: [String: Any]])
            #expect(Set(bodies.keys) == ["liveactivity_end", "alert", "widgets"])
            let end = try #require((bodies["liveactivity_end"]?["body"] as? [String: Any])?["aps"] as? [String: Any])
            #expect(end["event"] as? String == "end")
            #expect(end["dismissal-date"] != nil)
            let unknown = try await api.send(.get, "/v1/orders/\(UUID().uuidString)/preview", as: .pos)
            #expect(unknown.status == .notFound)
            let app = try await api.send(.get, "/v1/orders/\(id)/preview", as: .app)
            #expect(app.status == .forbidden)
        }
    }
}
