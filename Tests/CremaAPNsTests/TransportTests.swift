import CremaAPNsProtocol
import CremaAPNs
import CremaAPNsSimulator
import CremaClock
import CremaCore
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Testing

@Suite("TLS, the certificate, and the control API")
struct TransportTests {
    @Test("A client that does not trust the simulator's CA fails with a TLS error, not an answer")
    func untrustedCertificateFails() async throws {
        try await Harness.with { harness in
            // No retry of the failed handshake: the TLS error comes back at once instead of at the connect deadline.
            try await harness.withClient(trustCA: false, retriesFailedConnections: false) { client in
                do {
                    let response = try await client.send(Harness.request(.alert), signedBy: harness.key)
                    Issue.record("expected a TLS failure, got status \(response.status)")
                } catch let error as APNsClientError {
                    #expect(error.code == "apns_tls_failed", "got \(error)")
                }
            }
            #expect(harness.simulator.records().isEmpty)
        }
    }

    @Test("The simulator reuses the certificate already in its folder")
    func certificateIsReused() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "crema-apns-cert-\(UUID().uuidString)"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = APNsSimulatorConfiguration(directory: directory, keys: [], clock: .system)
        let first = try await APNsSimulator.start(configuration, logger: .init(label: "test"))
        let pem = try String(contentsOfFile: first.caFile, encoding: .utf8)
        try await first.shutdown()
        let second = try await APNsSimulator.start(configuration, logger: .init(label: "test"))
        #expect(try String(contentsOfFile: second.caFile, encoding: .utf8) == pem)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        try await second.shutdown()
    }

    @Test("The control API lists requests, filters them by token, and takes faults over HTTP/1.1")
    func controlAPIOverHTTP1() async throws {
        try await Harness.with { harness in
            let request = Harness.request(.alert)
            #expect(try await harness.withClient { try await $0.send(request, signedBy: harness.key) }.status == 200)

            try await harness.withRawClient(http1Only: true) { client in
                let health = try await harness.raw(client, method: .GET, path: "/sim/health", headers: [], body: nil)
                #expect(health.status == 200)

                let listed = try await harness.raw(
                    client, method: .GET, path: "/sim/requests?token=\(request.deviceToken)", headers: [], body: nil)
                #expect(listed.status == 200)
                let records = try JSONSerialization.jsonObject(with: Data(buffer: listed.body)) as? [[String: Any]]
                #expect(records?.count == 1)
                #expect(records?.first?["topic"] as? String == Harness.bundleID)

                let none = try await harness.raw(
                    client, method: .GET, path: "/sim/requests?token=00ff00ff00ff00ff", headers: [], body: nil)
                #expect(String(buffer: none.body) == "[]")

                let fault = #"{"type":"status","status":500,"reason":"InternalServerError","count":1}"#
                let injected = try await harness.raw(
                    client, path: "/sim/faults", headers: [("content-type", "application/json")], body: Data(fault.utf8)
                )
                #expect(injected.status == 201)
                let bad = try await harness.raw(
                    client, path: "/sim/faults", headers: [], body: Data(#"{"type":"meteor"}"#.utf8))
                #expect(bad.status == 400)

                #expect(
                    try await harness.raw(client, method: .DELETE, path: "/sim/requests", headers: [], body: nil).status
                        == 204)
            }
            #expect(harness.simulator.records().isEmpty)
            let failed = try await harness.withClient {
                try await $0.send(Harness.request(.alert), signedBy: harness.key)
            }
            #expect(failed.status == 500)
            #expect(failed.reason == "InternalServerError")
        }
    }

    @Test("A fault round-trips through its documented JSON")
    func faultJSONRoundTrip() throws {
        let faults: [APNsSimulatorFault] = [
            .unregistered(token: "abcd", since: Date(timeIntervalSince1970: 1_732_000_000)),
            .status(429, reason: "TooManyRequests", retryAfter: 5, count: 2, token: nil),
            .latency(milliseconds: 250, count: 3),
            .dropConnection(count: 1),
        ]
        for fault in faults {
            let data = try JSONEncoder().encode(fault)
            #expect(try JSONDecoder().decode(APNsSimulatorFault.self, from: data) == fault)
        }
    }
}
