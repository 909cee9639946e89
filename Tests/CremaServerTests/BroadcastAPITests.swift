import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaStore
import CremaTestSupport
import Foundation
import HTTPTypes
import Testing

/// Issue #33's "done when" for the store board, end to end: the API, the channel created and deleted at the project's
/// APNs simulator over HTTP/2 + TLS, order changes queued in their own transactions and broadcast by the real
/// broadcaster through the real APNs client, and the simulator's own checks of every broadcast.
@Suite("a store's board on an APNs broadcast channel", .serialized) struct BroadcastAPITests {
    typealias H = DeliveryHarness

    /// Creates the store and puts its board on a channel; returns the channel id.
    static func enable(_ h: H, storage: String = "none") async throws -> String {
        try await h.api.createStore()
        let response = try await h.api.send(.put, "/v1/stores/market-st/broadcast", as: .pos, body: #"{"storage":"\#(storage)"}"#)
        try #require(response.status == .ok, "\(response.text)")
        return try #require(response.json["channel_id"] as? String)
    }

    /// Moves the clock past the settle time and sends what is due, as the broadcaster's loop would.
    static func settle(_ h: H) async throws -> Int {
        await h.clock.advance(BoardChange.settleSeconds + 0.001)
        return try await h.broadcaster.sendDue()
    }

    /// The `aps` of each broadcast the simulator accepted on `channel`, in order.
    static func broadcasts(_ h: H, _ channel: String) -> [(record: APNsSimulatorRecord, aps: [String: Any])] {
        h.simulator.records(channel: channel).filter { $0.status == 200 }.map { record in
            let object = (try? JSONSerialization.jsonObject(with: Data(record.body.utf8))) as? [String: Any]
            return (record, object?["aps"] as? [String: Any] ?? [:])
        }
    }

    @Test("enabling a store's board creates one channel at the simulator, and enabling it again answers the same one")
    func enablingCreatesOneChannel() async throws {
        try await H.run { h in
            let id = try await Self.enable(h, storage: "latest")
            let again = try await h.api.send(.put, "/v1/stores/market-st/broadcast", as: .pos, body: #"{"storage":"latest"}"#)
            #expect(again.json["channel_id"] as? String == id)
            let channels = h.simulator.channels()
            #expect(channels.map(\.id) == [id])
            #expect(channels.first?.bundleID == H.bundleID)
            #expect(channels.first?.storage == .latest)
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .dashboard)
            #expect(read.json["state"] as? String == "active")
            #expect(read.json["environment"] as? String == "production")
            let conflict = try await h.api.send(.put, "/v1/stores/market-st/broadcast", as: .pos, body: #"{"storage":"none"}"#)
            #expect(conflict.status.code == 409)
            #expect(conflict.errorCode == "broadcast_storage_conflict")
            let elsewhere = try await h.api.send(
                .put, "/v1/stores/market-st/broadcast", as: .pos, body: #"{"storage":"latest","environment":"sandbox"}"#)
            #expect(elsewhere.status.code == 409)
            #expect(elsewhere.errorCode == "broadcast_channel_mismatch")
            let bad = try await h.api.send(.put, "/v1/stores/other/broadcast", as: .pos, body: #"{"storage":"all"}"#)
            #expect(bad.status.code == 422)
            #expect(h.simulator.channels().count == 1)
        }
    }

    @Test("a burst of order changes becomes one broadcast that passes the simulator's checks, and ready goes at priority 10")
    func orderChangesBecomeBroadcasts() async throws {
        try await H.run { h in
            let channel = try await Self.enable(h)
            let first = try await h.place(customer: "c-1")
            _ = try await h.place(customer: "c-2")
            try await h.event(first, #"{"type":"started","barista":"Sam"}"#)
            #expect(try await Self.settle(h) == 1)
            var sent = Self.broadcasts(h, channel)
            try #require(sent.count == 1)
            #expect(sent[0].record.priority == "5")
            #expect(sent[0].record.expiration == "0")
            #expect(sent[0].record.topic == nil)
            #expect(sent[0].aps["event"] as? String == "update")
            let state = try #require(sent[0].aps["content-state"] as? [String: Any])
            #expect((state["preparing"] as? [Int])?.count == 2)
            #expect((state["ready"] as? [Int]) == [])

            try await h.event(first, #"{"type":"ready","pickup_point":"counter"}"#)
            #expect(try await Self.settle(h) == 1)
            sent = Self.broadcasts(h, channel)
            try #require(sent.count == 2)
            #expect(sent[1].record.priority == "10")
            #expect(((sent[1].aps["content-state"] as? [String: Any])?["ready"] as? [Int])?.count == 1)
            // Nothing changed since: nothing is due.
            #expect(try await Self.settle(h) == 0)
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .pos)
            #expect(read.json["broadcasts"] as? Int == 2)
            #expect(read.json["last_status"] as? Int == 200)
            #expect(h.simulator.records(channel: channel).allSatisfy { $0.status == 200 })
        }
    }

    @Test("disabling a store's board deletes its channel at the simulator")
    func disablingDeletesTheChannel() async throws {
        try await H.run { h in
            _ = try await Self.enable(h)
            let deleted = try await h.api.send(.delete, "/v1/stores/market-st/broadcast", as: .pos)
            #expect(deleted.status == .noContent)
            #expect(h.simulator.channels().isEmpty)
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .pos)
            #expect(read.status.code == 404)
            #expect(read.errorCode == "broadcast_not_enabled")
            // Orders at a store without a board queue nothing.
            _ = try await h.place(customer: "c-1")
            #expect(try await Self.settle(h) == 0)
        }
    }

    @Test("a channel the simulator forgot is re-created on the next broadcast and reported")
    func aForgottenChannelIsRecreated() async throws {
        try await H.run { h in
            let old = try await Self.enable(h)
            #expect(try await Self.settle(h) == 1)
            #expect(h.simulator.forgetChannel(old))
            _ = try await h.place(customer: "c-1")
            #expect(try await Self.settle(h) == 1)  // ChannelNotRegistered: a new channel, the board due again at once
            #expect(try await h.broadcaster.sendDue() == 1)
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .pos)
            let new = try #require(read.json["channel_id"] as? String)
            #expect(new != old)
            #expect(read.json["state"] as? String == "recreated")
            #expect(read.json["recreations"] as? Int == 1)
            #expect(h.simulator.channels().map(\.id) == [new])
            #expect(Self.broadcasts(h, new).count == 1)
            #expect(h.simulator.records(channel: old).contains { $0.reason == "ChannelNotRegistered" })
        }
    }

    @Test("reconciling with all-channels re-creates a forgotten channel and deletes one no store uses")
    func reconcilingRecreatesAndDeletes() async throws {
        try await H.run { h in
            let kept = try await Self.enable(h)
            try await h.api.createStore("pier-9")
            let response = try await h.api.send(.put, "/v1/stores/pier-9/broadcast", as: .pos, body: #"{"storage":"none"}"#)
            let orphan = try #require(response.json["channel_id"] as? String)
            // The store's row goes, its channel stays at APNs: an orphan, as a crash between creating and keeping leaves.
            try await h.db.pool.withConnection { connection in
                _ = try await connection.query("DELETE FROM store_channels WHERE store_id = 'pier-9'")
            }
            #expect(h.simulator.forgetChannel(kept))
            // Only a channel kept before APNs was asked can be missing from its list.
            await h.clock.advance(1)
            let result = try await h.broadcaster.reconcile()
            #expect(result.recreated == 1)
            // An unused channel is only a suspect on the first pass (it may be one being created); the next pass deletes it.
            #expect(result.deleted == 0)
            #expect(h.simulator.channels().contains { $0.id == orphan })
            let next = try await h.broadcaster.reconcile()
            #expect(next.recreated == 0)
            #expect(next.deleted == 1)
            let now = h.simulator.channels().map(\.id)
            #expect(now.count == 1)
            #expect(!now.contains(kept) && !now.contains(orphan))
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .pos)
            #expect(read.json["channel_id"] as? String == now.first)
            #expect(read.json["state"] as? String == "recreated")
            // Nothing left to do: a second pass changes nothing.
            let second = try await h.broadcaster.reconcile()
            #expect(second.recreated == 0 && second.deleted == 0)
        }
    }

    @Test("an announcement rides on the board until it expires")
    func announcementsRideOnTheBoard() async throws {
        try await H.run { h in
            let channel = try await Self.enable(h)
            let until = h.clock.now.addingTimeInterval(600)
            let posted = try await h.api.post(
                "/v1/stores/market-st/announcements", as: .barista,
                #"{"message":"Espresso machine back at 10:30","until":"\#(until.formatted(.iso8601))"}"#)
            #expect(posted.status == .created, "\(posted.text)")
            #expect(try await Self.settle(h) == 1)
            let sent = try #require(Self.broadcasts(h, channel).last)
            #expect((sent.aps["content-state"] as? [String: Any])?["announcement"] as? String == "Espresso machine back at 10:30")
            // While it runs, an order change still goes out after one settle, with the announcement.
            _ = try await h.place(customer: "c-1")
            #expect(try await Self.settle(h) == 1)
            #expect((Self.broadcasts(h, channel).last?.aps["content-state"] as? [String: Any])?["announcement"] as? String != nil)
            // When it ends, the board goes out again without it, though no order changed.
            #expect(try await h.broadcaster.sendDue() == 0)
            await h.clock.advance(601)
            #expect(try await h.broadcaster.sendDue() == 1)
            let after = try #require(Self.broadcasts(h, channel).last)
            #expect((after.aps["content-state"] as? [String: Any])?["announcement"] == nil)
            #expect(try await Self.settle(h) == 0)
            let read = try await h.api.send(.get, "/v1/stores/market-st/broadcast", as: .dashboard)
            #expect((read.json["content_state"] as? [String: Any])?["announcement"] == nil)
            let past = try await h.api.post(
                "/v1/stores/market-st/announcements", as: .barista, #"{"message":"late","until":"2020-01-01T00:00:00Z"}"#)
            #expect(past.status.code == 422)
            let dashboard = try await h.api.post(
                "/v1/stores/market-st/announcements", as: .dashboard, #"{"message":"x","until":"\#(until.formatted(.iso8601))"}"#)
            #expect(dashboard.status.code == 403)
        }
    }

    @Test("a customer's app gets the channel, the attributes and the board to subscribe with")
    func aCustomerGetsTheChannel() async throws {
        try await H.run { h in
            let channel = try await Self.enable(h)
            _ = try await h.place(customer: "c-1")
            let token = try await CustomerTokenFixtures.token(for: "c-1")
            let response = try await h.api.send(.get, "/v1/me/stores/market-st/broadcast", rawKey: "Bearer \(token)")
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.json["channel_id"] as? String == channel)
            #expect((response.json["attributes"] as? [String: Any])?["storeID"] as? String == "market-st")
            #expect(((response.json["content_state"] as? [String: Any])?["preparing"] as? [Int])?.count == 1)
            let missing = try await h.api.send(.get, "/v1/me/stores/pier-9/broadcast", rawKey: "Bearer \(token)")
            #expect(missing.errorCode == "broadcast_not_enabled")
        }
    }

    @Test("a customer who asked for the board has it started on their device onto the channel, once per order they place")
    func theBoardStartsOnTheCustomersDevice() async throws {
        try await H.run { h in
            let channel = try await Self.enable(h)
            let device = H.token(9, length: 64)
            let customer = "Bearer \(try await CustomerTokenFixtures.token(for: "c-1"))"
            let registered = try await h.api.send(
                .put, "/v1/me/stores/market-st/broadcast/start-token", body: #"{"token":"\#(device)","environment":"production"}"#, rawKey: customer)
            #expect(registered.status == .noContent, "\(registered.text)")
            let first = try await h.place(customer: "c-1")
            _ = try await h.place(customer: "c-2")
            #expect(try await Self.settle(h) == 1)
            var starts = h.accepted(device)
            try #require(starts.count == 1)
            #expect(starts[0].record.topic == "\(H.bundleID).push-type.liveactivity")
            #expect(starts[0].aps["event"] as? String == "start")
            #expect(starts[0].aps["attributes-type"] as? String == "StoreBoardAttributes")
            #expect(starts[0].aps["input-push-channel"] as? String == channel)
            #expect(starts[0].aps["input-push-token"] == nil)
            #expect((starts[0].aps["content-state"] as? [String: Any])?["preparing"] as? [Int] == [1, 2])

            // Another change at the store: broadcast, not started again.
            try await h.event(first, #"{"type":"started","barista":"Sam"}"#)
            #expect(try await Self.settle(h) == 1)
            #expect(h.accepted(device).count == 1)
            // A new order by the same customer starts it again (the first activity may have ended).
            _ = try await h.place(customer: "c-1")
            #expect(try await Self.settle(h) == 1)
            starts = h.accepted(device)
            #expect(starts.count == 2)

            let removed = try await h.api.send(.delete, "/v1/me/stores/market-st/broadcast/start-token", rawKey: customer)
            #expect(removed.status == .noContent)
            _ = try await h.place(customer: "c-1")
            #expect(try await Self.settle(h) == 1)
            #expect(h.accepted(device).count == 2)

            try await h.api.createStore("pier-9")
            let elsewhere = try await h.api.send(
                .put, "/v1/me/stores/pier-9/broadcast/start-token", body: #"{"token":"\#(device)"}"#, rawKey: customer)
            #expect(elsewhere.errorCode == "broadcast_not_enabled")
            let sandbox = try await h.api.send(
                .put, "/v1/me/stores/market-st/broadcast/start-token", body: #"{"token":"\#(device)","environment":"sandbox"}"#, rawKey: customer)
            #expect(sandbox.status.code == 422)
        }
    }

    @Test("a tenant's board goes on a channel of its own app, created and broadcast with its own team's key")
    func aTenantsBoardUsesItsOwnKey() async throws {
        try await H.run(trusting: [TenantDeliveryTests.harborKey]) { h in
            let keys = try await TenantDeliveryTests.harbor(h)
            _ = try await h.api.send(.put, "/v1/stores/h1", body: #"{"name":"Harbor One"}"#, rawKey: keys.pos)
            let enabled = try await h.api.send(.put, "/v1/stores/h1/broadcast", body: #"{"storage":"none"}"#, rawKey: keys.pos)
            #expect(enabled.status == .ok, "\(enabled.text)")
            #expect(enabled.json["bundle_id"] as? String == TenantDeliveryTests.harborApp)
            let channel = try #require(enabled.json["channel_id"] as? String)
            #expect(h.simulator.channels().first { $0.id == channel }?.bundleID == TenantDeliveryTests.harborApp)
            let placed = try await h.api.send(
                .post, "/v1/orders", idempotencyKey: UUID().uuidString, body: APIClient.orderBody(store: "h1"), rawKey: keys.pos)
            #expect(placed.status == .created, "\(placed.text)")
            #expect(try await Self.settle(h) == 1)
            let sent = try #require(Self.broadcasts(h, channel).last)
            #expect(sent.record.keyID == TenantDeliveryTests.harborKey.keyID)
            #expect(sent.record.teamID == TenantDeliveryTests.harborKey.teamID)
            #expect(sent.record.path.hasSuffix("/4/broadcasts/apps/\(TenantDeliveryTests.harborApp)"))
            // The default tenant's keys do not reach harbor's store, whatever they try.
            #expect(try await h.api.send(.get, "/v1/stores/h1/broadcast", as: .pos).status.code == 404)
            #expect(try await h.api.send(.delete, "/v1/stores/h1/broadcast", as: .pos).status.code == 404)
            #expect(try await h.api.send(.put, "/v1/stores/h1/broadcast", as: .pos, body: #"{"storage":"none"}"#).status.code == 404)
            let until = h.clock.now.addingTimeInterval(600).formatted(.iso8601)
            #expect(try await h.api.post("/v1/stores/h1/announcements", as: .barista, #"{"message":"hi","until":"\#(until)"}"#).status.code == 404)
            let stranger = "Bearer \(try await CustomerTokenFixtures.token(for: "c-1"))"
            #expect(try await h.api.send(.get, "/v1/me/stores/h1/broadcast", rawKey: stranger).errorCode == "broadcast_not_enabled")
            #expect(h.simulator.channels().map(\.id) == [channel])
        }
    }

    @Test("past APNs' channel limit a store's board is refused cleanly and nothing is kept")
    func pastTheChannelLimitTheBoardIsRefused() async throws {
        try await H.run(maxChannelsPerApp: 1) { h in
            _ = try await Self.enable(h)
            try await h.api.createStore("pier-9")
            let refused = try await h.api.send(.put, "/v1/stores/pier-9/broadcast", as: .pos, body: #"{"storage":"none"}"#)
            #expect(refused.status.code == 409)
            #expect(refused.errorCode == "channel_limit_reached")
            let read = try await h.api.send(.get, "/v1/stores/pier-9/broadcast", as: .pos)
            #expect(read.errorCode == "broadcast_not_enabled")
            #expect(h.simulator.channels().count == 1)
        }
    }

    @Test("a change during a send goes next at its own priority, and a claim whose lease ran out changes nothing")
    func changesDuringASendAreKept() async throws {
        try await H.run { h in
            _ = try await Self.enable(h)
            let order = try await h.place(customer: "c-1")
            try await h.event(order, #"{"type":"ready","pickup_point":"counter"}"#)
            let outbox = BroadcastRepository(pool: h.db.pool)
            func row() async throws -> (priority: Int, changes: Int64)? {
                try await h.db.pool.withConnection { connection in
                    try await connection.query("SELECT priority::int AS priority, changes FROM broadcast_outbox WHERE store_id = 'market-st'").first
                        .map { (try $0.decode("priority"), try $0.decode("changes")) }
                }
            }
            await h.clock.advance(BoardChange.settleSeconds + 0.001)
            let first = try #require(try await outbox.claim(for: "default", limit: 10, lease: 30, now: h.clock.now).first)
            #expect(first.priority == 10)
            // A routine change arrives while that board is in flight.
            try await outbox.queueBoard(store: "market-st", tenant: "default", change: BoardChange(priority: 5), at: h.clock.now)
            try await outbox.finish(first, status: 200, reason: nil, sent: true, at: h.clock.now)
            let left = try #require(try await row())
            #expect(left.priority == 5)
            #expect(left.changes == 1)

            await h.clock.advance(BoardChange.settleSeconds + 0.001)
            let stale = try #require(try await outbox.claim(for: "default", limit: 10, lease: 30, now: h.clock.now).first)
            await h.clock.advance(31)
            let taken = try #require(try await outbox.claim(for: "default", limit: 10, lease: 30, now: h.clock.now).first)
            #expect(taken.lease != stale.lease)
            try await outbox.queueBoard(store: "market-st", tenant: "default", change: BoardChange(priority: 5), at: h.clock.now)
            // The first claim's late answer neither removes the row nor frees the second claim's lease.
            try await outbox.finish(stale, status: 200, reason: nil, sent: true, at: h.clock.now)
            try await outbox.retry(stale, at: h.clock.now, error: "late")
            #expect(try await row()?.changes == taken.changes + 1)
            #expect(try await outbox.claim(for: "default", limit: 10, lease: 30, now: h.clock.now).isEmpty)
            try await outbox.finish(taken, status: 200, reason: nil, sent: true, at: h.clock.now)
            #expect(try await row()?.changes == 1)
        }
    }
}
