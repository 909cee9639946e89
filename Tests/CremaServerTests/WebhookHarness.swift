import CremaAPNsKey
import CremaAPNsSimulator
import CremaClock
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Prometheus

/// The application with a webhook dispatcher on a clock the test moves (its poll fallback and maintenance tick too), a
/// fresh database, and real receivers (`WebhookReceiver`, HTTP or HTTPS on 127.0.0.1). Registration may allow private
/// addresses (the receivers are on loopback) while sending refuses them, to show the check at send time.
struct WebhookHarness: Sendable {
    let api: APIClient
    let db: TestDatabase
    let clock: TestClock
    /// The certificate HTTPS receivers serve; the dispatcher trusts it (`CREMA_WEBHOOK_CA_FILE`).
    let certificate: SimulatorCertificate

    static func run(
        _ label: String = #function, registersPrivate: Bool = true, sendsToPrivate: Bool = true, requestTimeout: Double = 10,
        maintenanceInterval: Duration = .milliseconds(100), _ body: @escaping @Sendable (WebhookHarness) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crema-hooks-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = try SimulatorCertificate.loadOrCreate(directory: directory.path, now: Date())
        let clock = TestClock(Date())
        let logger = Logger(label: "test")
        try await TestDatabase.with(label) { db in
            var policy = WebhookPolicy()
            policy.requestTimeout = requestTimeout
            let process = try APIHarness.process(pool: db.pool, conninfo: db.conninfo, workers: [.webhooks], clock: clock.crema, adjusting: { setup in
                setup.webhookPolicy = policy
                setup.webhooksAllowPrivateAddresses = registersPrivate
                setup.webhooksSendToPrivateAddresses = sendsToPrivate
                // A microsecond of the harness's clock: any move of the clock wakes an idle dispatcher (`eventually` moves it
                // by that much per look, as waiting would).
                setup.webhookDispatcher.pollInterval = .microseconds(1)
                setup.webhookDispatcher.maintenanceInterval = maintenanceInterval
                setup.webhookDispatcher.trustRootsPEMFile = certificate.caFile
                // The longest wait of each backoff step, so moving the clock by the cap always makes a retry due.
                setup.webhookDispatcher.random = { 1 }
            })
            let app = CremaApplication.build(APIHarness.dependencies(process), host: "127.0.0.1", port: 0, logger: logger)
            try await app.test(.router) { http in
                try await body(WebhookHarness(api: APIClient(client: http), db: db, clock: clock, certificate: certificate))
            }
        }
    }

    /// A receiver, HTTPS with the harness's certificate unless `https` is false.
    func receiver(https: Bool = false) async throws -> WebhookReceiver {
        https
            ? try await WebhookReceiver.start(certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)
            : try await WebhookReceiver.start()
    }

    /// Registers `url` for `events` with the POS key; returns the endpoint's id and secret.
    func register(_ url: String, events: [String] = ["order.changed"]) async throws -> (id: String, secret: String) {
        let events = events.map { "\"\($0)\"" }.joined(separator: ",")
        let answer = try await api.post("/v1/webhooks", as: .pos, #"{"url":"\#(url)","events":[\#(events)]}"#)
        guard answer.status == .created, let id = answer.json["id"] as? String, let secret = answer.json["secret"] as? String else {
            throw HarnessFailure("registration answered \(answer.status): \(answer.text)")
        }
        return (id, secret)
    }

    /// Places an order and moves it through `events` (barista events, each a JSON body); returns its id.
    func lifecycle(_ events: [String] = []) async throws -> String {
        try await api.createStore()
        let placed = try await api.post("/v1/orders", as: .pos, APIClient.orderBody(eta: clock.now.addingTimeInterval(300)))
        guard placed.status == .created, let id = placed.json["id"] as? String else { throw HarnessFailure("placing answered \(placed.text)") }
        for event in events {
            let answer = try await api.post("/v1/orders/\(id)/events", as: .barista, event)
            guard answer.status == .ok else { throw HarnessFailure("\(event) answered \(answer.text)") }
        }
        return id
    }

    /// The states of the endpoint's deliveries, as `state attempts` strings (for failure messages too).
    func deliveries(_ endpoint: String) async throws -> [(state: String, attempts: Int)] {
        try await db.pool.withConnection { connection in
            try await connection.query(
                "SELECT state, attempts FROM webhook_deliveries WHERE endpoint_id = \(UUID(uuidString: endpoint)!) ORDER BY delivery_id"
            ).map { (try $0.decode("state", as: String.self), try $0.decode("attempts", as: Int.self)) }
        }
    }

    /// Whether the endpoint has `count` deliveries, each tried at least once, and none due at the clock or in flight.
    func settled(_ endpoint: String, count: Int) async throws -> Bool {
        let rows = try await deliveries(endpoint)
        guard rows.count == count, rows.allSatisfy({ $0.attempts >= 1 }) else { return false }
        return try await db.scalar(
            "SELECT count(*) FROM webhook_deliveries WHERE state = 'inflight' OR (state = 'pending' AND run_at <= \(clock.now))", as: Int.self) == 0
    }

    /// Waits (up to `deadline` of real time, polling) until `condition` holds; false if it never does. Each look moves
    /// the harness's clock by the dispatcher's poll interval (a microsecond), as waiting would: a dispatcher that went
    /// to sleep just after the test moved the clock finds what became due.
    func eventually(_ deadline: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            if try await condition() { return true }
            await clock.advance(0.000_001)
            try await Task.sleep(for: .milliseconds(25))
        }
        return try await condition()
    }

    struct HarnessFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
