import CremaClock
import CremaCore
import CremaDelivery
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import Testing

/// Orders that end by themselves, seen through the API (docs/data-lifecycle.md): stores set their limits with
/// `PUT /v1/stores/{store}`, clients cannot send `expired`, and an expiry shows on the order and the board like any event.
@Suite(.serialized) struct OrderExpiryAPITests {
    @Test("Store limits default to 120 and 240 minutes, are set per store, kept when a PUT leaves them out, and checked")
    func storeLimitsAreSettable() async throws {
        try await APIHarness.run { api, _ in
            let created = try await api.send(.put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Market St"}"#)
            #expect(created.status == .created)
            #expect(created.json["ready_expiry_minutes"] as? Int == 120)
            #expect(created.json["queued_expiry_minutes"] as? Int == 240)

            let set = try await api.send(.put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Market St","ready_expiry_minutes":30}"#)
            #expect(set.status == .ok)
            #expect(set.json["ready_expiry_minutes"] as? Int == 30)
            #expect(set.json["queued_expiry_minutes"] as? Int == 240)

            let renamed = try await api.send(.put, "/v1/stores/market-st", as: .pos, body: #"{"name":"Market Street"}"#)
            #expect(renamed.json["ready_expiry_minutes"] as? Int == 30)

            for body in [#"{"name":"M","ready_expiry_minutes":0}"#, #"{"name":"M","queued_expiry_minutes":10081}"#] {
                let refused = try await api.send(.put, "/v1/stores/market-st", as: .pos, body: body)
                #expect(refused.status == .unprocessableContent)
                #expect(refused.errorCode == "invalid_value")
            }
        }
    }

    @Test("A client cannot send an expired event, and allowed_events never offers one")
    func clientsCannotExpire() async throws {
        try await APIHarness.run { api, _ in
            try await api.createStore()
            let id = try await api.placeOrder()
            for role in [Role.pos, .barista] {
                let refused = try await api.post("/v1/orders/\(id)/events", as: role, #"{"type":"expired"}"#)
                #expect(refused.status == .badRequest)
                #expect(refused.errorCode == "invalid_field")
            }
            let order = try await api.send(.get, "/v1/orders/\(id)", as: .dashboard)
            #expect((order.json["allowed_events"] as? [String])?.contains("expired") == false)
        }
    }

    @Test("An expiry shows like any other event: the order is canceled with an expired event by system, and it leaves the board")
    func expiryIsVisibleOnOrderAndBoard() async throws {
        try await TestDatabase.with { db in
            let dependencies = try APIHarness.dependencies(pool: db.pool)
            let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: Logger(label: "test"))
            try await app.test(.router) { client in
                let api = APIClient(client: client)
                try await api.createStore()
                let id = try await api.placeOrder()
                _ = try await api.post("/v1/orders/\(id)/events", as: .barista, #"{"type":"ready"}"#)
                // The sweep's clock is two hours and a minute ahead; the close itself goes through the app's own service.
                let sweeper = LifecycleSweeper(
                    service: dependencies.service, retentionDays: 30, clock: .system(shiftedBy: 2 * 3600 + 60),
                    logger: Logger(label: "test"))
                #expect(try await sweeper.sweep().expired == 1)

                let order = try await api.send(.get, "/v1/orders/\(id)", as: .dashboard)
                #expect(order.json["state"] as? String == "canceled")
                let last = (order.json["events"] as? [[String: Any]])?.last
                #expect(last?["type"] as? String == "expired")
                #expect(last?["role"] as? String == "system")
                #expect((last?["data"] as? [String: Any])?["reason"] as? String == "not_collected")

                let board = try await api.send(.get, "/v1/stores/market-st/board", as: .dashboard)
                let ready = (board.json["columns"] as? [String: Any])?["ready"] as? [[String: Any]]
                #expect(ready?.isEmpty == true)
            }
        }
    }
}
