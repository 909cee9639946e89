import CremaAPNsSimulator
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaServer
import CremaTestSupport
import Foundation
import Testing

/// Issue #14's faults: a slow APNs, a connection dropped or sent GOAWAY while a batch is on it, and
/// `TooManyRequests` for one token. Throughput for the other tokens holds, nothing is lost, and attempts stay bounded.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DeliveryThroughputFaultTests {
    typealias H = DeliveryHarness

    /// `count` orders ready for their own alert token each, placed while the dispatcher is held, so the whole backlog
    /// is claimed and on one connection at once when the test starts it.
    func backlog(_ h: H, count: Int, seed: UInt8) async throws -> [(id: String, token: String)] {
        var orders: [(id: String, token: String)] = []
        for n in 0..<count {
            let token = H.token(seed &+ UInt8(n))
            orders.append((try await h.readyAlert(customer: "c-\(seed)-\(n)", token: token), token))
        }
        let pending = try await h.db.scalar("SELECT count(*) FROM delivery_outbox WHERE state = 'pending' AND push_type = 'alert'", as: Int.self)
        try #require(pending == count)
        return orders
    }

    @Test("a slow APNs answer holds only its own push: pushes to other tokens are sent and recorded while it waits")
    func slowAnswersHoldOnlyTheirOwnPush() async throws {
        // More slow pushes than workers: a dispatcher that waited for a whole batch would have no worker left. The
        // slow answers are held at APNs until the test has seen every other push sent and recorded.
        try await H.run { h in
            let slow = (0..<(H.fastRetries.workers + 1)).map { H.token(UInt8(120 + $0)) }
            for token in slow { h.simulator.inject(.hold(count: 1, token: token)) }
            var slowOrders: [String] = []
            for (n, token) in slow.enumerated() {
                slowOrders.append(try await h.readyAlert(customer: "c-slow-\(n)", token: token))
                await h.simulator.received(token: token)
            }
            var others: [(id: String, token: String)] = []
            for n in 0..<10 {
                let token = H.token(UInt8(140 + n))
                others.append((try await h.readyAlert(customer: "c-fast-\(n)", token: token), token))
            }
            for other in others { #expect(try await h.drained(other.id)) }
            // The slow answers are still on their way: nothing of theirs was recorded, and nothing waited for them.
            for id in slowOrders { #expect(try await h.alertRow(id)["state"] as? String == "inflight") }
            for other in others {
                #expect(try await h.alertRow(other.id)["state"] as? String == "sent")
                #expect(h.accepted(other.token).count == 1)
            }
            // Then each slow one is recorded once its answer comes, after its one attempt.
            #expect(h.simulator.releaseHeld() == slow.count)
            for id in slowOrders {
                #expect(try await h.drained(id))
                let row = try await h.alertRow(id)
                #expect(row["state"] as? String == "sent")
                #expect(row["attempts"] as? Int == 1)
            }
            for token in slow { #expect(h.simulator.records(token: token).count == 1) }
        }
    }

    @Test("GOAWAY in the middle of a batch: every push goes exactly once, the rest on a new connection")
    func goAwayMidBatchLosesNothingAndSendsNothingTwice() async throws {
        try await H.run(dispatchHeld: true) { h in
            let orders = try await backlog(h, count: 40, seed: 160)
            h.simulator.inject(.goAway(count: 1))
            h.startDispatching()
            for order in orders { #expect(try await h.drained(order.id)) }
            for order in orders {
                let row = try await h.alertRow(order.id)
                #expect(row["state"] as? String == "sent")
                // A stream past the GOAWAY was never processed: sent again at most once more, and accepted once.
                #expect((row["attempts"] as? Int ?? 0) <= 2)
                #expect(h.accepted(order.token).count == 1)
            }
            let records = orders.flatMap { h.simulator.records(token: $0.token) }
            #expect(records.contains { $0.detail == "fault: goaway" })
            #expect(Set(records.map(\.connectionID)).count >= 2)
        }
    }

    @Test("a connection dropped in the middle of a batch loses nothing, with bounded attempts")
    func droppedConnectionMidBatchLosesNothing() async throws {
        try await H.run(dispatchHeld: true) { h in
            let orders = try await backlog(h, count: 40, seed: 200)
            h.simulator.inject(.dropConnection(count: 1))
            h.startDispatching()
            for order in orders { #expect(try await h.drained(order.id)) }
            for order in orders {
                let row = try await h.alertRow(order.id)
                #expect(row["state"] as? String == "sent")
                #expect((row["attempts"] as? Int ?? 0) <= 2)
                // At least once: a push APNs took whose answer the drop lost is sent again, never more than that.
                #expect((1...2).contains(h.accepted(order.token).count))
            }
        }
    }

    @Test("TooManyRequests for one token backs that token off while every other push of the batch goes at once")
    func tooManyRequestsForOneTokenDelaysOnlyThatToken() async throws {
        var settings = H.fastRetries
        // A long back-off: the other pushes must all be recorded while this one still waits for its next try.
        settings.retry = RetryPolicy(base: 30, cap: 30, maxAttempts: 8)
        try await H.run(dispatcher: settings, dispatchHeld: true) { h in
            let orders = try await backlog(h, count: 20, seed: 230)
            let throttled = orders[7]
            h.simulator.inject(.status(429, reason: "TooManyRequests", retryAfter: nil, count: 1, token: throttled.token))
            h.startDispatching()
            for order in orders where order.id != throttled.id { #expect(try await h.drained(order.id)) }
            for order in orders where order.id != throttled.id {
                #expect(try await h.alertRow(order.id)["state"] as? String == "sent")
                #expect(h.accepted(order.token).count == 1)
            }
            let row = try await h.alertRow(throttled.id)
            #expect(row["state"] as? String == "pending")
            #expect(row["attempts"] as? Int == 1)
            #expect(row["apns_status"] as? Int == 429)
            #expect(h.simulator.records(token: throttled.token).map(\.status) == [429])
        }
    }
}
