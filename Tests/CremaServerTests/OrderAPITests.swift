import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import CremaServer
import CremaCore
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

@Suite(.timeLimit(.minutes(2))) struct OrderAPITests {
    @Test("an order walked through its life over HTTP") func anOrderWalkedThroughItsLifeOverHTTP() async throws {
        try await APIHarness.run { api, db in
            try await api.createStore()
            let body = APIClient.orderBody()
            let placed = try await api.post("/v1/orders", as: .pos, key: "place-1", body)
            #expect(placed.status == .created)
            #expect(placed.json["state"] as? String == "queued")
            #expect(placed.json["version"] as? Int == 1)
            #expect(placed.json["number"] as? Int == 1)
            #expect(placed.json["allowed_events"] as? [String] == ["started", "delayed", "ready", "canceled"])
            let id = try #require(placed.json["id"] as? String)

            let replay = try await api.post("/v1/orders", as: .pos, key: "place-1", body)
            #expect(replay.status == .created)
            #expect(replay.text == placed.text)
            #expect(replay.headers[HTTPField.Name("Idempotent-Replayed")!] == "true")

            for (role, body, state) in [
                (Role.barista, #"{"type":"started","barista":"Sam","expected_version":1}"#, "preparing"),
                (.barista, #"{"type":"delayed","eta":"\#(Date().addingTimeInterval(600).formatted(.iso8601))","reason":"milk"}"#, "preparing"),
                (.barista, #"{"type":"ready","pickup_point":"counter"}"#, "ready"),
                (.pos, #"{"type":"picked_up"}"#, "picked_up"),
            ] {
                let response = try await api.post("/v1/orders/\(id)/events", as: role, body)
                #expect(response.status == .ok, "\(body): \(response.text)")
                #expect(response.json["state"] as? String == state)
            }
            let shown = try await api.send(.get, "/v1/orders/\(id)", as: .dashboard)
            #expect(shown.status == .ok)
            #expect(shown.json["version"] as? Int == 5)
            #expect(shown.json["pickup_point"] as? String == "counter")
            #expect(shown.json["delay_reason"] as? String == "milk")
            let events = try #require(shown.json["events"] as? [[String: Any]])
            #expect(events.map { $0["type"] as? String } == ["placed", "started", "delayed", "ready", "picked_up"])
            #expect(events.map { $0["role"] as? String } == ["pos", "barista", "barista", "barista", "pos"])
            #expect(try await db.scalar("SELECT count(*) FROM order_events", as: Int.self) == 5)
        }
    }

    @Test("listing pages through a store and the board groups open orders") func listingPagesThroughAStoreAndTheBoardGroupsOpenOrders() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            var ids: [String] = []
            for _ in 0..<3 { ids.append(try await api.placeOrder()) }
            _ = try await api.post("/v1/orders/\(ids[1])/events", as: .barista, #"{"type":"started","barista":"Sam"}"#)
            let first = try await api.send(.get, "/v1/orders?store=market-st&limit=2", as: .barista)
            #expect(first.status == .ok)
            let cursor = try #require(first.json["next_cursor"] as? String)
            let second = try await api.send(.get, "/v1/orders?store=market-st&limit=2&cursor=\(cursor)", as: .barista)
            let listed = ((first.json["orders"] as? [[String: Any]]) ?? []) + ((second.json["orders"] as? [[String: Any]]) ?? [])
            #expect(listed.map { $0["id"] as? String } == ids)
            #expect(second.json["next_cursor"] is NSNull)

            let board = try await api.send(.get, "/v1/stores/market-st/board", as: .dashboard)
            let columns = try #require(board.json["columns"] as? [String: [[String: Any]]])
            #expect(columns["queued"]?.map { $0["id"] as? String } == [ids[0], ids[2]])
            #expect(columns["preparing"]?.map { $0["id"] as? String } == [ids[1]])
            #expect(columns["ready"]?.isEmpty == true)
        }
    }
}
