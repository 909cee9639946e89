import CremaAPNsProtocol
import CremaAPNs
import CremaAPNsSimulator
import CremaCore
import Foundation
import NIOFoundationCompat
import Synchronization
import Testing

@Suite("Faults the simulator plays and how the client reports them")
struct FaultTests {
    @Test("A 410 Unregistered fault comes back with its timestamp and retires the token")
    func unregisteredRetiresTheToken() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.liveactivity)
            let since = Date(timeIntervalSince1970: 1_732_000_000.123)
            harness.simulator.inject(.unregistered(token: request.deviceToken, since: since))
            let (gone, other) = try await harness.withClient { client in
                (
                    try await client.send(request, signedBy: harness.key),
                    try await client.send(Harness.request(.liveactivity), signedBy: harness.key)
                )
            }
            #expect(gone.status == 410)
            #expect(gone.reason == "Unregistered")
            let timestamp = try #require(gone.timestamp)
            #expect(abs(timestamp.timeIntervalSince1970 - since.timeIntervalSince1970) < 0.001)
            #expect(gone.disposition == .retireToken(since: timestamp))
            #expect(other.status == 200)
        }
    }

    @Test("A 429 fault carries Retry-After into the response and asks for a later retry")
    func tooManyRequestsCarriesRetryAfter() async throws {
        try await Harness.with { harness in
            harness.simulator.inject(.status(429, reason: "TooManyRequests", retryAfter: 7, count: 1, token: nil))
            let (first, second) = try await harness.withClient { client in
                (
                    try await client.send(Harness.request(.alert), signedBy: harness.key),
                    try await client.send(Harness.request(.alert), signedBy: harness.key)
                )
            }
            #expect(first.status == 429)
            #expect(first.reason == "TooManyRequests")
            #expect(first.retryAfter == 7)
            #expect(first.disposition == .retry(after: 7))
            #expect(second.status == 200)
        }
    }

    @Test("A 503 fault for one token is answered to that token only, and is retryable")
    func serviceUnavailableForOneToken() async throws {
        try await Harness.with { harness in
            let target = Harness.request(.widgets)
            harness.simulator.inject(
                .status(503, reason: "ServiceUnavailable", retryAfter: nil, count: 2, token: target.deviceToken))
            let answers = try await harness.withClient { client in
                [
                    try await client.send(Harness.request(.widgets), signedBy: harness.key),
                    try await client.send(target, signedBy: harness.key),
                    try await client.send(target, signedBy: harness.key),
                    try await client.send(target, signedBy: harness.key),
                ]
            }
            #expect(answers.map(\.status) == [200, 503, 503, 200])
            #expect(answers[1].reason == "ServiceUnavailable")
            #expect(answers[1].disposition == .retry(after: nil))
        }
    }

    @Test("A dropped connection throws a connection error instead of hanging, and the next send reconnects")
    func droppedConnectionThrows() async throws {
        try await Harness.with { harness in
            harness.simulator.inject(.dropConnection(count: 1))
            try await harness.withClient { client in
                do {
                    let response = try await client.send(Harness.request(.alert), signedBy: harness.key)
                    Issue.record("expected an error, got status \(response.status)")
                } catch let error as APNsClientError {
                    #expect(error != .timeout)
                    let connectionCodes: [String] = ["apns_connection_closed", "apns_connection_failed"]
                    #expect(connectionCodes.contains(error.code), "got \(error)")
                }
                let again = try await client.send(Harness.request(.alert), signedBy: harness.key)
                #expect(again.status == 200)
            }
            #expect(harness.simulator.records().first?.status == 0)
        }
    }

    @Test("Latency beyond the client's request timeout throws timeout")
    func latencyBeyondTimeoutThrowsTimeout() async throws {
        try await Harness.with { harness in
            try await harness.withClient(requestTimeout: .milliseconds(300)) { client in
                // The connection is opened first (a few bounded tries on a loaded machine), so what times out below is
                // the held answer, not a slow connect.
                for _ in 0..<50 {
                    if (try? await client.send(Harness.request(.alert), signedBy: harness.key)) != nil { break }
                }
                try #require(!harness.simulator.records().isEmpty, "no warm-up request reached the simulator")
                // Held far beyond the deadline: no answer can arrive in time however slow the machine.
                harness.simulator.inject(.latency(milliseconds: 120_000, count: 1))
                await #expect(throws: APNsClientError.timeout) {
                    try await client.send(Harness.request(.alert), signedBy: harness.key)
                }
            }
        }
    }

    @Test("A test can wait for a held request's arrival: the waiter resumes while the answer is still delayed")
    func arrivalIsAnEventEvenWhileTheAnswerIsHeld() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.alert)
            // Held far longer than the test could wait: only the arrival can end the wait below.
            harness.simulator.inject(.latency(milliseconds: 600_000, count: 1))
            try await harness.withClient(requestTimeout: .seconds(600)) { client in
                let send = Task { try await client.send(request, signedBy: harness.key) }
                await harness.simulator.received(token: request.deviceToken)
                #expect(harness.simulator.records(token: request.deviceToken).count == 1)
                send.cancel()
                _ = try? await send.value
            }
        }
    }

    @Test("Latency within the timeout still delivers the answer")
    func latencyWithinTimeoutDelivers() async throws {
        try await Harness.with { harness in
            harness.simulator.inject(.latency(milliseconds: 100, count: 1))
            let response = try await harness.withClient {
                try await $0.send(Harness.request(.alert), signedBy: harness.key)
            }
            #expect(response.status == 200)
        }
    }

    @Test("A held answer comes only when released, and the other token's answer does not wait for it")
    func heldAnswerComesOnRelease() async throws {
        try await Harness.with { harness in
            let held = Harness.request(.alert)
            harness.simulator.inject(.hold(count: 1, token: held.deviceToken))
            try await harness.withClient(requestTimeout: .seconds(60)) { client in
                let answered = Mutex(false)
                let send = Task {
                    defer { answered.withLock { $0 = true } }
                    return try await client.send(held, signedBy: harness.key)
                }
                await harness.simulator.received(token: held.deviceToken)
                // Another push on the same connection is answered while the first is held.
                let other = try await client.send(Harness.request(.alert), signedBy: harness.key)
                #expect(other.status == 200)
                // Nothing but the release answers the held push: it is still waiting after the other one's answer.
                #expect(!answered.withLock { $0 })
                #expect(harness.simulator.releaseHeld() == 1)
                #expect(try await send.value.status == 200)
                #expect(harness.simulator.releaseHeld() == 0)
            }
        }
    }

    @Test("A release right after the arrival is never missed, and the control API releases too")
    func releaseIsNotMissedAndWorksOverTheControlAPI() async throws {
        try await Harness.with { harness in
            harness.simulator.inject(.hold(count: 3))
            try await harness.withClient(requestTimeout: .seconds(60)) { client in
                let requests = (0..<3).map { _ in Harness.request(.alert) }
                let sends = requests.map { request in Task { try await client.send(request, signedBy: harness.key) } }
                for request in requests { await harness.simulator.received(token: request.deviceToken) }
                let release = try await harness.withRawClient { raw in
                    try await harness.raw(raw, path: "/sim/release", headers: [], body: nil)
                }
                #expect(release.status == 200)
                let answer = try JSONSerialization.jsonObject(with: Data(buffer: release.body)) as? [String: Any]
                #expect(answer?["released"] as? Int == 3)
                for send in sends { #expect(try await send.value.status == 200) }
            }
        }
    }

    @Test("Every fault reads back from the JSON it writes, as the control API takes it")
    func faultsReadBackFromTheirJSON() throws {
        let faults: [APNsSimulatorFault] = [
            .unregistered(token: "ab01", since: Date(timeIntervalSince1970: 1_732_250_000)),
            .status(429, reason: "TooManyRequests", retryAfter: 5, count: 3, token: nil),
            .latency(milliseconds: 2000, count: 1, token: "ab01"), .hold(count: 2, token: nil), .hold(count: 1, token: "ab01"),
            .dropConnection(count: 1), .goAway(count: 4),
        ]
        for fault in faults {
            #expect(try JSONDecoder().decode(APNsSimulatorFault.self, from: JSONEncoder().encode(fault)) == fault)
        }
        #expect(try JSONDecoder().decode(APNsSimulatorFault.self, from: Data(#"{"type":"hold"}"#.utf8)) == .hold(count: 1))
    }

    @Test("Clearing faults ends a persistent Unregistered fault")
    func clearingFaults() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.alert)
            harness.simulator.inject(.unregistered(token: request.deviceToken, since: Date()))
            try await harness.withClient { client in
                let first = try await client.send(request, signedBy: harness.key).status
                let second = try await client.send(request, signedBy: harness.key).status
                harness.simulator.clearFaults()
                let third = try await client.send(request, signedBy: harness.key).status
                #expect([first, second, third] == [Int](arrayLiteral: 410, 410, 200))
            }
        }
    }
}
