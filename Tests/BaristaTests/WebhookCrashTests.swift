import CremaAPI
import CremaAPNsProtocol
import CremaPostgres
import NIOHTTP1
import CremaTestSupport
import Foundation
import Testing

/// Webhooks across a crash of the real `crema serve`: every change was written with its event, so a `kill -9` loses
/// none, and what was in flight is sent again under the same event id (docs/webhooks.md).
@Suite struct WebhookCrashTests {
    static let environment = [
        "CREMA_MASTER_KEY": Data(repeating: 9, count: 32).base64EncodedString(), "CREMA_WEBHOOK_ALLOW_PRIVATE": "1", "LOG_LEVEL": "error",
    ]

    /// Places an order and takes it to picked up; returns `"<order id> v<version>"` for each of its four changes.
    static func lifecycle(_ crema: Crema) async throws -> [String] {
        let id = try await crema.place("Ana")
        for event: JSONValue in [["type": "started", "barista": "Sam"], ["type": "ready"], ["type": "picked_up"]] {
            let (status, answer) = try await crema.api(.POST, "/v1/orders/\(id)/events", key: TestKeys.barista, body: event, idempotencyKey: UUID().uuidString)
            try #require(status == 200, "\(answer)")
        }
        return (1...4).map { "\(id) v\($0)" }
    }

    static func change(_ request: WebhookReceiver.Request) -> String? {
        guard let order = (request.json["data"] as? [String: Any])?["order"] as? [String: Any], let id = order["id"] as? String,
            let version = order["version"] as? Int
        else { return nil }
        return "\(id) v\(version)"
    }

    @Test("A receiver sees every order.changed exactly once after deduplication, across a kill -9 of crema")
    func everyChangeArrivesAcrossAKill() async throws {
        try await TestDatabase.with { database in
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("webhook-crash-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: home) }
            let receiver = try await WebhookReceiver.start()
            var server = try await ServerProcess.start(conninfo: database.conninfo, environment: Self.environment)
            var expected: [String] = []
            do {
                var crema = Crema(url: server.url, home: home)
                try await crema.putStore()
                let (status, registered) = try await crema.api(
                    .POST, "/v1/webhooks", key: TestKeys.pos, body: ["url": .string(receiver.url()), "events": ["order.changed"]],
                    idempotencyKey: UUID().uuidString)
                try #require(status == 201, "\(registered)")
                for _ in 0..<5 { expected += try await Self.lifecycle(crema) }
                // At once after the last event: some of its webhooks are still waiting or on the wire.
                server.kill()
                // What the dead process had in flight comes back when its 20 s lease runs out. The leases are ended
                // now instead of waited for, as if the time had passed; the new process rescues them on its first
                // maintenance pass.
                try await database.pool.withConnection { connection in
                    _ = try await connection.query("UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE state = 'inflight'")
                }
                server = try await ServerProcess.start(conninfo: database.conninfo, environment: Self.environment)
                crema = Crema(url: server.url, home: home)
                for _ in 0..<3 { expected += try await Self.lifecycle(crema) }
                let end = ContinuousClock.now + .seconds(60)
                while Set(receiver.deduplicated.compactMap(Self.change)) != Set(expected), ContinuousClock.now < end {
                    try await Task.sleep(for: .milliseconds(100))
                }
                let changes = receiver.deduplicated.compactMap(Self.change)
                #expect(Set(changes) == Set(expected), "missing: \(Set(expected).subtracting(changes))")
                #expect(changes.count == expected.count, "one event id per change, whatever the number of attempts")
                #expect(receiver.requests.count >= expected.count)
                server.stop()
            } catch {
                server.kill()
                throw error
            }
            try await receiver.stop()
        }
    }
}
