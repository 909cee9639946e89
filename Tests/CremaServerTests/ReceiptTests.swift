import CremaAPNsSimulator
import CremaCore
import CremaService
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Receipts end to end (issue #47): the receipt each push carries as the simulator accepted it, posted back by its
/// customer or inferred from what the app did next, on the delivery log and in the store's funnel.
@Suite(.serialized) struct ReceiptTests {
    typealias H = DeliveryHarness

    static func jwt(_ customer: String) async throws -> String { "Bearer \(try await CustomerTokenFixtures.token(for: customer))" }

    /// The `crema.receipt` of the last push the simulator accepted for `token`.
    static func receipt(_ h: H, _ token: String) throws -> String {
        let record = try #require(h.accepted(token).last?.record)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.body.utf8)) as? [String: Any])
        return try #require((object["crema"] as? [String: Any])?["receipt"] as? String)
    }

    static func post(_ h: H, _ customer: String, _ items: [(receipt: String, surface: String)], at: Date) async throws -> APIResponse {
        let list = items.map { #"{"receipt":"\#($0.receipt)","surface":"\#($0.surface)","at":"\#(at.formatted(.iso8601))"}"# }
        return try await h.api.send(.post, "/v1/me/receipts", body: #"{"receipts":[\#(list.joined(separator: ","))]}"#, rawKey: try await jwt(customer))
    }

    static func funnel(_ h: H, since: Date) async throws -> [[String: Any]] {
        let answer = try await h.api.send(.get, "/v1/stores/market-st/funnel?since=\(since.formatted(.iso8601))", as: .dashboard)
        #expect(answer.status == .ok, "\(answer.text)")
        return answer.json["push_types"] as? [[String: Any]] ?? []
    }

    @Test("a receipt opens only for its tenant and unaltered, and shows neither its delivery nor its order")
    func aReceiptOpensOnlyForItsTenantAndUnaltered() throws {
        let key = DeliveryReceiptKey(masterKey: try MasterKey(base64: APIHarness.masterKey))
        let order = UUID()
        let receipt = key.receipt(tenant: "brand-a", deliveryID: 7, orderID: order)
        #expect(receipt.utf8.count == DeliveryReceipt.length && receipt == key.receipt(tenant: "brand-a", deliveryID: 7, orderID: order))
        #expect(key.open(receipt, tenant: "brand-a") == DeliveryReceipt(deliveryID: 7, orderID: order))
        #expect(key.open(receipt, tenant: "brand-b") == nil)
        #expect(key.receipt(tenant: "brand-a", deliveryID: 8, orderID: order) != receipt)
        let other = DeliveryReceiptKey(masterKey: try MasterKey(base64: Data(repeating: 9, count: 32).base64EncodedString()))
        #expect(other.open(receipt, tenant: "brand-a") == nil)
        let parts = try #require(DeliveryReceipt.parts(of: receipt))
        #expect(parts.sealed != DeliveryReceipt(deliveryID: 7, orderID: order).fields)
        for index in receipt.indices.dropLast() {  // (the last character also holds 4 bits no byte uses)
            var altered = receipt
            altered.replaceSubrange(index...index, with: receipt[index] == "B" ? "C" : "B")
            #expect(key.open(altered, tenant: "brand-a") == nil)
        }
        #expect(key.open(DeliveryReceipt.placeholder, tenant: "brand-a") == nil)
    }

    @Test("a push's receipt posted by its customer shows on the delivery and in the funnel, and a repeat changes nothing")
    func aPushsReceiptPostedByItsCustomerShowsOnTheDeliveryAndInTheFunnel() async throws {
        try await H.run { h in
            let since = h.clock.now.addingTimeInterval(-1)
            let token = H.token(71)
            let id = try await h.readyAlert(customer: "c-r1", token: token)
            #expect(try await h.drained(id))
            let receipt = try Self.receipt(h, token)
            #expect(receipt != DeliveryReceipt.placeholder && receipt.utf8.count == DeliveryReceipt.length)
            let row = try await h.alertRow(id)
            let opened = try #require(DeliveryReceiptKey(masterKey: try MasterKey(base64: APIHarness.masterKey)).open(receipt, tenant: "default"))
            #expect(opened.deliveryID == row["id"] as? Int64 ?? Int64(row["id"] as? Int ?? -1))
            #expect(row["received_at"] == nil)

            await h.clock.advance(2)
            let answer = try await Self.post(h, "c-r1", [(receipt, "notification")], at: h.clock.now)
            #expect(answer.status == .accepted)
            #expect(answer.json["accepted"] as? Int == 1 && answer.json["unknown"] as? Int == 0)
            let received = try await h.alertRow(id)
            #expect(received["receipt_surface"] as? String == "notification")
            let receivedAt = try #require(received["received_at"] as? String)

            await h.clock.advance(5)
            let again = try await Self.post(h, "c-r1", [(receipt, "app")], at: h.clock.now)
            #expect(again.json["accepted"] as? Int == 1 && again.json["unknown"] as? Int == 0)
            let kept = try await h.alertRow(id)
            #expect(kept["receipt_surface"] as? String == "notification" && kept["received_at"] as? String == receivedAt)

            let alert = try #require(try await Self.funnel(h, since: since).first { $0["push_type"] as? String == "alert" })
            #expect(alert["planned"] as? Int == 1 && alert["sent"] as? Int == 1 && alert["accepted"] as? Int == 1)
            #expect((alert["received"] as? [String: Int])?["notification"] == 1)
            #expect(alert["event"] is NSNull)
            let seconds = try #require(alert["receipt_seconds"] as? [String: Any])
            #expect((seconds["p50"] as? Double).map { $0 >= 0 } == true)

            let metrics = try await h.api.send(.get, "/metrics")
            #expect(metrics.text.contains(#"crema_push_receipts_total{push_type="alert",surface="notification"} 1"#), "\(metrics.text)")
        }
    }

    @Test("another customer's receipt, an altered one and a placeholder are unknown and change nothing")
    func anotherCustomersReceiptIsUnknownAndChangesNothing() async throws {
        try await H.run { h in
            let token = H.token(72)
            let id = try await h.readyAlert(customer: "c-owner", token: token)
            #expect(try await h.drained(id))
            let receipt = try Self.receipt(h, token)
            var altered = Array(receipt)
            altered[altered.count - 2] = altered[altered.count - 2] == "A" ? "B" : "A"
            let answer = try await Self.post(h, "c-thief", [(receipt, "notification")], at: h.clock.now)
            #expect(answer.status == .accepted)
            #expect(answer.json["accepted"] as? Int == 0 && answer.json["unknown"] as? Int == 1)
            let forged = try await Self.post(
                h, "c-owner", [(String(altered), "notification"), (DeliveryReceipt.placeholder, "app"), ("nonsense", "app")], at: h.clock.now)
            #expect(forged.json["accepted"] as? Int == 0 && forged.json["unknown"] as? Int == 3)
            #expect(try await h.alertRow(id)["received_at"] == nil)
            let receipts = try await h.db.pool.withConnection { try await $0.query("SELECT 1 FROM delivery_receipts").count }
            #expect(receipts == 0)
        }
    }

    @Test("a receipt request is refused whole when it is too long or names a surface the app cannot post")
    func aReceiptRequestIsRefusedWholeWhenItIsTooLongOrNamesASurfaceTheAppCannotPost() async throws {
        try await H.run { h in
            let many = Array(repeating: (receipt: DeliveryReceipt.placeholder, surface: "app"), count: 101)
            let tooMany = try await Self.post(h, "c-x", many, at: h.clock.now)
            #expect(tooMany.status == .badRequest)
            let inferred = try await Self.post(h, "c-x", [(DeliveryReceipt.placeholder, "widget_fetch")], at: h.clock.now)
            #expect(inferred.status == .badRequest)
            let shop = try await h.api.send(.post, "/v1/me/receipts", as: .pos, body: #"{"receipts":[]}"#)
            #expect(shop.status == .forbidden)
        }
    }

    @Test("a push-to-start carries a collapse id from its order, and the activity's token registration is its receipt")
    func aPushToStartFollowedByTheActivitysTokenRegistrationShowsAsReceived() async throws {
        try await H.run { h in
            let since = h.clock.now.addingTimeInterval(-1)
            let startToken = H.token(73)
            try await h.registerCustomer("c-start", kind: "push-to-start", token: startToken)
            let id = try await h.place(customer: "c-start")
            #expect(try await h.drained(id))
            let start = try #require(h.accepted(startToken).first)
            #expect(start.aps["event"] as? String == "start")
            #expect(start.record.collapseID == "start-" + id)
            let startRow = try #require(try await h.deliveries(id).first { $0["live_activity_event"] as? String == "start" && $0["state"] as? String == "sent" })
            #expect(startRow["collapse_id"] as? String == "start-" + id)
            #expect(startRow["received_at"] == nil)

            await h.clock.advance(3)
            let registered = try await h.api.send(
                .put, "/v1/me/orders/\(id)/live-activity-token", body: #"{"token":"\#(H.token(74, length: 64))","environment":"sandbox"}"#,
                rawKey: try await Self.jwt("c-start"))
            #expect(registered.status == .created)
            let received = try #require(try await h.deliveries(id).first { $0["id"] as? Int == startRow["id"] as? Int })
            #expect(received["receipt_surface"] as? String == "activity_token")
            let starts = try #require(try await Self.funnel(h, since: since).first { $0["event"] as? String == "start" })
            #expect((starts["received"] as? [String: Int])?["activity_token"] == 1)
            #expect((starts["receipt_seconds"] as? [String: Any])?["p50"] as? Double == 3)
        }
    }

    @Test("a widget push followed by the customer's widget fetch shows as received, inferred")
    func aWidgetPushFollowedByAWidgetFetchShowsAsReceivedInferred() async throws {
        try await H.run { h in
            let widget = H.token(75)
            try await h.registerCustomer("c-widget", kind: "widget", token: widget)
            let id = try await h.place(customer: "c-widget")
            #expect(try await h.drained(id))
            #expect(h.accepted(widget).count == 1)
            let jwt = try await Self.jwt("c-widget")
            await h.clock.advance(1)
            #expect(try await h.api.send(.get, "/v1/me/widget", rawKey: jwt).status == .ok)
            let row = try #require(try await h.deliveries(id).first { $0["push_type"] as? String == "widgets" && $0["state"] as? String == "sent" })
            #expect(row["receipt_surface"] as? String == "widget_fetch")
            let first = row["received_at"] as? String
            await h.clock.advance(1)
            _ = try await h.api.send(.get, "/v1/me/widget", rawKey: jwt)
            #expect(try await h.deliveries(id).first { $0["id"] as? Int == row["id"] as? Int }?["received_at"] as? String == first)
        }
    }

    @Test("a customer's erasure removes the receipts of their orders")
    func aCustomersErasureRemovesTheReceiptsOfTheirOrders() async throws {
        try await H.run { h in
            let token = H.token(76)
            let id = try await h.readyAlert(customer: "c-gone", token: token)
            #expect(try await h.drained(id))
            let posted = try await Self.post(h, "c-gone", [(try Self.receipt(h, token), "notification")], at: h.clock.now)
            #expect(posted.json["accepted"] as? Int == 1)
            #expect(try await h.api.send(.delete, "/v1/customers/c-gone", as: .pos).status == .noContent)
            #expect(try await h.alertRow(id)["received_at"] == nil)
            let receipts = try await h.db.pool.withConnection { try await $0.query("SELECT 1 FROM delivery_receipts").count }
            #expect(receipts == 0)
        }
    }

    @Test("the funnel answers only pos and dashboard keys, and a store outside the caller's reach is unknown")
    func theFunnelAnswersOnlyPosAndDashboardKeys() async throws {
        try await H.run { h in
            try await h.api.createStore()
            let since = h.clock.now.formatted(.iso8601)
            #expect(try await h.api.send(.get, "/v1/stores/market-st/funnel?since=\(since)", as: .pos).status == .ok)
            #expect(try await h.api.send(.get, "/v1/stores/market-st/funnel?since=\(since)", as: .barista).status == .forbidden)
            #expect(try await h.api.send(.get, "/v1/stores/nowhere/funnel?since=\(since)", as: .pos).status == .notFound)
            #expect(try await h.api.send(.get, "/v1/stores/market-st/funnel", as: .pos).status == .badRequest)
        }
    }

    @Test("a funnel asked from before the outbox's 72 hours, even from year 1, counts from 72 hours ago and says so")
    func aFunnelAskedFromBeforeTheOutboxsWindowCountsFromItsStart() async throws {
        try await H.run { h in
            try await h.api.createStore()
            let window = h.clock.now.addingTimeInterval(-OrderService.funnelWindow)
            for since in ["0001-01-01T00:00:00Z", window.addingTimeInterval(-3600).formatted(.iso8601)] {
                let answer = try await h.api.send(.get, "/v1/stores/market-st/funnel?since=\(since)", as: .pos)
                #expect(answer.status == .ok, "\(since): \(answer.text)")
                #expect(Self.seconds(answer.json["since"], from: window) < 0.001, "\(since): \(answer.text)")
            }
            // And one from the future counts from now: nothing yet.
            let later = try await h.api.send(.get, "/v1/stores/market-st/funnel?since=9999-12-31T23:59:59Z", as: .pos)
            #expect(Self.seconds(later.json["since"], from: h.clock.now) < 0.001, "\(later.text)")
        }
    }

    /// How far the answer's timestamp (RFC 3339, milliseconds) lies from `date`; infinity when it is not one.
    static func seconds(_ value: Any?, from date: Date) -> TimeInterval {
        guard let text = value as? String, let parsed = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) else {
            return .infinity
        }
        return abs(parsed.timeIntervalSince(date))
    }

    /// What the funnel should say, counted from the delivery logs the same way: a push planned (not a planner's skip),
    /// taken to APNs, accepted, received by surface.
    struct Tally: Equatable, CustomStringConvertible {
        var planned = 0, sent = 0, accepted = 0
        var received: [String: Int] = [:]
        var description: String { "planned \(planned) sent \(sent) accepted \(accepted) received \(received)" }
    }

    @Test("the funnel's counts equal the delivery log's over a randomized replay", arguments: [UInt64(47), 4_747])
    func theFunnelsCountsEqualTheDeliveryLogsOverARandomizedReplay(_ seed: UInt64) async throws {
        try await H.run { h in
            var random = SeededGenerator(seed: seed)
            let since = h.clock.now.addingTimeInterval(-1)
            var orders: [String] = []
            for n in 0..<6 {
                let customer = "c-replay-\(n)"
                var tokens: [String] = []
                for (kind, seedByte) in [("alert", 0), ("widget", 1), ("push-to-start", 2)] where Bool.random(using: &random) {
                    let token = H.token(UInt8(100 + n * 3 + seedByte))
                    try await h.registerCustomer(customer, kind: kind, token: token)
                    tokens.append(token)
                }
                let id = try await h.place(customer: customer)
                orders.append(id)
                #expect(try await h.drained(id))
                let path = [
                    [#"{"type":"started","barista":"Sam"}"#, #"{"type":"ready","pickup_point":"counter"}"#, #"{"type":"picked_up"}"#],
                    [#"{"type":"canceled","reason":"out of oat milk"}"#],
                    [#"{"type":"ready","pickup_point":"counter"}"#],
                ].randomElement(using: &random)!
                for event in path {
                    if Bool.random(using: &random), tokens.contains(H.token(UInt8(100 + n * 3 + 2))) {
                        _ = try await h.api.send(
                            .put, "/v1/me/orders/\(id)/live-activity-token",
                            body: #"{"token":"\#(H.token(UInt8(200 + n), length: 64))","environment":"sandbox"}"#, rawKey: try await Self.jwt(customer))
                    }
                    await h.clock.advance(Double(Int.random(in: 1...30, using: &random)))
                    try await h.event(id, event)
                    #expect(try await h.drained(id))
                }
                var posts: [(receipt: String, surface: String)] = []
                for token in tokens {
                    for record in h.accepted(token).map(\.record) where Bool.random(using: &random) {
                        let object = try #require(try JSONSerialization.jsonObject(with: Data(record.body.utf8)) as? [String: Any])
                        guard let receipt = (object["crema"] as? [String: Any])?["receipt"] as? String else { continue }
                        posts.append((receipt, ["notification", "activity", "app"].randomElement(using: &random)!))
                    }
                }
                if !posts.isEmpty {
                    await h.clock.advance(Double(Int.random(in: 0...5, using: &random)))
                    _ = try await Self.post(h, customer, posts, at: h.clock.now)
                }
                if Bool.random(using: &random) { _ = try await h.api.send(.get, "/v1/me/widget", rawKey: try await Self.jwt(customer)) }
            }

            var expected: [String: Tally] = [:]
            for id in orders {
                for row in try await h.deliveries(id) {
                    guard let type = row["push_type"] as? String else { continue }
                    let state = row["state"] as? String, attempts = row["attempts"] as? Int ?? 0
                    if state == "skipped" && attempts == 0 { continue }
                    let key = type + "/" + ((row["live_activity_event"] as? String) ?? "-")
                    var tally = expected[key] ?? Tally()
                    tally.planned += 1
                    if attempts > 0 && state != "skipped" { tally.sent += 1 }
                    if row["sent_at"] != nil { tally.accepted += 1 }
                    if let surface = row["receipt_surface"] as? String { tally.received[surface, default: 0] += 1 }
                    expected[key] = tally
                }
            }
            var answered: [String: Tally] = [:]
            for step in try await Self.funnel(h, since: since) {
                let key = (step["push_type"] as? String ?? "?") + "/" + ((step["event"] as? String) ?? "-")
                let received = (step["received"] as? [String: Int] ?? [:]).filter { $0.value > 0 }
                answered[key] = Tally(
                    planned: step["planned"] as? Int ?? -1, sent: step["sent"] as? Int ?? -1, accepted: step["accepted"] as? Int ?? -1,
                    received: received)
            }
            #expect(answered == expected)
            #expect(!expected.isEmpty)
        }
    }
}
