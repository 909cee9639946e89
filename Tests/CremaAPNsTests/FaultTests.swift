import CremaAPNsProtocol
import CremaAPNs
import CremaAPNsSimulator
import CremaCore
import Foundation
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
