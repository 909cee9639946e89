import CremaAPNsProtocol
import CremaAPNsSimulator
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaServer
import CremaTestSupport
import Foundation
import Testing

/// APNs faults injected in the simulator, handled as docs/apns.md §3 classifies them.
@Suite(.serialized) struct DeliveryFaultTests {
    typealias H = DeliveryHarness

    @Test("429 and 503 are retried with backoff until APNs accepts", arguments: [
        (429, "TooManyRequests", Optional(1)), (503, "ServiceUnavailable", Optional<Int>.none), (500, "InternalServerError", nil),
    ])
    func transientFaultsAreRetried(status: Int, reason: String, retryAfter: Int?) async throws {
        try await H.run { h in
            let token = H.token(10)
            h.simulator.inject(.status(status, reason: reason, retryAfter: retryAfter, count: 2, token: token))
            let start = h.clock.now
            let id = try await h.readyAlert(customer: "c-retry", token: token)
            #expect(try await h.drained(id))
            // `drained` moves the clock to each retry's time: how far it moved is the backoff the dispatcher chose.
            let waited = h.clock.now.timeIntervalSince(start)
            let row = try await h.alertRow(id)
            #expect(row["state"] as? String == "sent")
            #expect(row["attempts"] as? Int == 3)
            #expect(row["apns_status"] as? Int == 200)
            // The earlier failures' reason does not linger on a push that went.
            #expect(row["apns_reason"] == nil || row["apns_reason"] is NSNull)
            let seen = h.simulator.records(token: token)
            #expect(seen.map(\.status) == [status, status, 200])
            if let retryAfter {
                // Retry-After is honoured: each retry came no sooner than it said.
                #expect(waited >= 2 * Double(retryAfter), "\(waited)")
            } else {
                // Backoff, but no longer than the policy allows: at least half its base and at most its cap, twice.
                let policy = H.fastRetries.retry
                #expect(waited >= policy.base && waited <= 2 * policy.cap + 0.01, "\(waited)")
            }
        }
    }

    @Test("a push past its expiration by the dispatcher's clock is dead, never sent")
    func expiredPushIsNotSent() async throws {
        try await H.run(dispatchHeld: true) { h in
            let token = H.token(92)
            let id = try await h.readyAlert(customer: "c-late", token: token)
            // The clock runs past the alert's lifetime before any dispatcher sees it: time is moved, not waited for.
            await h.clock.advance(DeliveryPolicy().alertLifetime + 60)
            h.startDispatching()
            #expect(try await h.drained(id))
            let row = try await h.alertRow(id)
            #expect(row["state"] as? String == "dead")
            #expect(row["attempts"] as? Int == 1)
            #expect(row["apns_reason"] as? String == "expired before it could be sent")
            #expect(h.simulator.records(token: token).isEmpty)
        }
    }

    @Test("a push that keeps failing stops after the attempt limit: no retry storm")
    func boundedAttempts() async throws {
        try await H.run { h in
            let token = H.token(11)
            h.simulator.inject(.status(500, reason: "InternalServerError", retryAfter: nil, count: 1_000, token: token))
            let id = try await h.readyAlert(customer: "c-storm", token: token)
            #expect(try await h.drained(id))
            let row = try await h.alertRow(id)
            #expect(row["state"] as? String == "dead")
            #expect(row["attempts"] as? Int == 8)
            #expect((row["apns_reason"] as? String)?.contains("gave up after 8 attempts") == true)
            #expect(h.simulator.records(token: token).count == 8)
        }
    }

    @Test("410 retires the token and nothing more is sent to it")
    func unregisteredRetiresTheToken() async throws {
        try await H.run { h in
            let token = H.token(12)
            try await h.registerCustomer("c-gone", kind: "alert", token: token)
            h.simulator.inject(.unregistered(token: token, since: Date().addingTimeInterval(5)))
            let first = try await h.place(customer: "c-gone")
            try await h.event(first, #"{"type":"ready","pickup_point":"counter"}"#)
            #expect(try await h.drained(first))
            let row = try await h.alertRow(first)
            #expect(row["state"] as? String == "dead")
            #expect(row["apns_status"] as? Int == 410)
            #expect(row["apns_reason"] as? String == "Unregistered")

            let second = try await h.place(customer: "c-gone")
            try await h.event(second, #"{"type":"ready","pickup_point":"counter"}"#)
            #expect(try await h.drained(second))
            #expect(try await h.deliveries(second).compactMap { $0["reason_code"] as? String }.allSatisfy { $0 == "no_targets" })
            #expect(h.simulator.records(token: token).count == 1)
        }
    }

    @Test("a 410 older than the token's latest registration does not retire it")
    func staleUnregisteredKeepsTheToken() async throws {
        try await H.run { h in
            let token = H.token(13)
            h.simulator.inject(.unregistered(token: token, since: Date().addingTimeInterval(-3600)))
            let id = try await h.readyAlert(customer: "c-back", token: token)
            #expect(try await h.drained(id))
            let active = try await h.db.scalar("SELECT count(*) FROM customer_tokens WHERE retired_at IS NULL", as: Int.self)
            #expect(active == 1)
        }
    }

    @Test("BadDeviceToken retires the token; PayloadTooLarge-like permanent errors are dead-lettered without retry")
    func permanentErrors() async throws {
        try await H.run { h in
            let bad = H.token(14), refused = H.token(15)
            h.simulator.inject(.status(400, reason: "BadDeviceToken", retryAfter: nil, count: 1, token: bad))
            h.simulator.inject(.status(403, reason: "Forbidden", retryAfter: nil, count: 1, token: refused))
            let first = try await h.readyAlert(customer: "c-bad", token: bad)
            let second = try await h.readyAlert(customer: "c-forbidden", token: refused)
            #expect(try await h.drained(first))
            #expect(try await h.drained(second))
            #expect(try await h.alertRow(first)["state"] as? String == "dead")
            #expect(try await h.alertRow(second)["attempts"] as? Int == 1)
            let retired = try await h.db.scalar("SELECT count(*) FROM customer_tokens WHERE retired_at IS NOT NULL", as: Int.self)
            #expect(retired == 1)
        }
    }

    @Test("two dispatchers on one database send every push exactly once")
    func twoDispatchersNeverDoubleSend() async throws {
        try await H.run(dispatchers: 2) { h in
            var tokens: [String] = []
            var ids: [String] = []
            for n in 0..<30 {
                let token = H.token(UInt8(40 + n))
                tokens.append(token)
                try await h.registerCustomer("c-\(n)", kind: "alert", token: token)
                let id = try await h.place(customer: "c-\(n)")
                try await h.event(id, #"{"type":"ready","pickup_point":"counter"}"#)
                ids.append(id)
            }
            for id in ids { #expect(try await h.drained(id)) }
            for token in tokens { #expect(h.simulator.records(token: token).count == 1) }
        }
    }
}
