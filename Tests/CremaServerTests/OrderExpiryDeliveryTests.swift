import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaClock
import CremaCore
import CremaDelivery
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Logging
import Testing

/// An order that ends by itself ends its Live Activity like any other end: API → sweep → `expired` event
/// transaction → outbox → dispatcher → the APNs simulator over HTTP/2 + TLS.
@Suite(.serialized) struct OrderExpiryDeliveryTests {
    typealias H = DeliveryHarness

    @Test("An order left ready past its store's limit is closed by the sweep and its Live Activity gets a quiet end push")
    func expiredOrderEndsItsActivity() async throws {
        try await H.run { h in
            let activity = H.token(41, length: 80)
            let id = try await h.place(customer: "c-forgot")
            try await h.registerActivity(id, token: activity)
            try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
            #expect(try await h.drained(id))

            // The sweep's clock reads two hours and a minute later (the store's default limit is two hours); the close
            // goes through an order service on the same database, as another crema process would.
            let service = OrderService(database: CremaDatabase(pool: h.db.pool, clock: .system), defaultBundleID: H.bundleID, clock: .system)
            let sweeper = LifecycleSweeper(
                service: service, retentionDays: 30, clock: .system(shiftedBy: 2 * 3600 + 60), logger: Logger(label: "test"))
            #expect(try await sweeper.sweep().expired == 1)
            #expect(try await h.drained(id))

            let pushes = h.accepted(activity)
            try #require(pushes.count == 2)
            #expect(pushes.map { $0.aps["event"] as? String } == ["update", "end"])
            #expect(pushes[1].record.priority == "5")
            #expect(pushes[1].aps["alert"] == nil)
            #expect((pushes[1].aps["content-state"] as? [String: Any])?["status"] as? String == "canceled")
            let codes = try await h.deliveries(id).map { "\($0["order_event"] as? String ?? "-"):\($0["reason_code"] as? String ?? "-"):\($0["state"] as? String ?? "-")" }
            #expect(codes.contains("expired:activity_end:sent"))
        }
    }
}
