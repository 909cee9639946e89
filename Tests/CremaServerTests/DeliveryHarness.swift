import CremaAPNsKey
import CremaAPNsProtocol
import CremaAPNs
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
import ServiceLifecycle
import Synchronization
import Testing

/// The whole delivery path for a test: the real API on a fresh database, the real dispatcher (woken by the API's
/// change feed in process, further dispatchers by its real NOTIFY), the real APNs client, and the project's APNs
/// simulator over HTTP/2 + TLS on 127.0.0.1. The API and the dispatchers share a clock the test moves: a retry's
/// backoff is skipped, never waited for (`drained`), and the dispatchers' poll fallback and maintenance tick run only
/// when the clock moves. The APNs client and simulator stay on real time: provider tokens and connection backoff are
/// theirs, not what these tests move.
struct DeliveryHarness: Sendable {
    static let bundleID = "cafe.crema.test"
    let api: APIClient
    let db: TestDatabase
    let simulator: APNsSimulator
    /// The planner's and the dispatchers' clock; it stands still unless a test (or `drained`) moves it.
    let clock: TestClock
    let registry: PrometheusCollectorRegistry
    /// The dispatchers' keyrings (one per dispatcher, as one per process).
    let keyrings: [SigningKeyring]
    /// The first process's store-board broadcaster, driven by the test (`sendDue`, `reconcile`) rather than left to
    /// poll on the harness's clock.
    let broadcaster: BroadcastDispatcher
    /// Starts the dispatchers of a harness run with `dispatchHeld` (a no-op otherwise), so a test can build up a
    /// backlog and have it claimed in one go.
    let startDispatching: @Sendable () -> Void

    /// Short backoffs (on the harness's clock, skipped rather than waited for); the attempt limit is the production
    /// one. The poll fallback is a microsecond of the harness's clock, so any move of the clock (a retry made due)
    /// wakes an idle dispatcher, and no look at the clock waits for one; no linger, since a linger on the harness's
    /// clock would hold outcomes until the next move.
    static var fastRetries: DispatcherConfiguration {
        var configuration = DispatcherConfiguration()
        configuration.retry = RetryPolicy(base: 0.05, cap: 0.2, maxAttempts: 8)
        configuration.pollInterval = .microseconds(1)
        configuration.recordLinger = .zero
        configuration.maintenanceInterval = .milliseconds(500)
        return configuration
    }

    static func run(
        _ label: String = #function, dispatcher settings: DispatcherConfiguration = fastRetries, dispatchers: Int = 1,
        dispatchHeld: Bool = false, trusting extraKeys: [APNsSigningKey] = [], maxChannelsPerApp: Int = 10_000, server: String? = nil,
        _ body: @escaping @Sendable (DeliveryHarness) async throws -> Void
    ) async throws {
        let clock = TestClock(Date())
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crema-sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = APNsSigningKey.generate(keyID: "TESTKEY001", teamID: "TESTTEAM01")
        var simConfiguration = APNsSimulatorConfiguration(
            directory: directory.path,
            keys: ([key] + extraKeys).map { APNsSimulatorKey(keyID: $0.keyID, teamID: $0.teamID, publicKeyPEM: $0.publicKeyPEM) },
            clock: .system)
        simConfiguration.maxChannelsPerApp = maxChannelsPerApp
        simConfiguration.startsNeedCollapseID = true
        let logger = Logger(label: "test")
        let simulator = try await APNsSimulator.start(simConfiguration, logger: logger)
        var configuration = APNsClientConfiguration.singleServer(simulator.baseURL, extraTrustRootsPEMFile: simulator.caFile)
        // Generous bounds: a loaded test machine can take seconds to reach the in-process simulator.
        configuration.connectTimeout = .seconds(60)
        configuration.requestTimeout = .seconds(60)
        let client = try APNsClient(configuration: configuration, logger: logger, clock: .system)
        do {
            try await TestDatabase.with(label, server: server) { db in
                // Each dispatcher is a process of its own, built by the composition root: the first one serves the API too
                // (its dispatcher woken by the API's changes in process), the others have their own pool, keyring and
                // change feed and hear the API's NOTIFY. They share the harness's APNs client and clock.
                let registry = PrometheusCollectorRegistry()
                let processes = try (0..<dispatchers).map { index in
                    var setup = CremaProcess.Setup(
                        pool: index == 0 ? db.pool : PostgresPool(.init(conninfo: db.conninfo, maxConnections: 4)), conninfo: db.conninfo,
                        workers: index == 0 ? [.pushes, .idempotency] : [.pushes], logger: logger)
                    setup.registry = registry
                    setup.clock = clock.crema
                    setup.masterKey = try MasterKey(base64: APIHarness.masterKey)
                    setup.defaultBundleID = bundleID
                    setup.dispatcher = settings
                    // The client is the harness's to close (after the run), so the process gets it without the simulator.
                    setup.apns = APNsRuntime(client: client, signingKey: key, simulator: nil, bundleID: bundleID)
                    setup.keyring = SigningKeyring(
                        repository: CremaDatabase(pool: setup.pool, clock: .system).apnsKeys, masterKey: setup.masterKey, configured: [bundleID: key], logger: logger,
                        clock: clock.crema)
                    return try CremaProcess(setup)
                }
                let keyrings = processes.compactMap(\.keyring)
                var dependencies = APIHarness.dependencies(processes[0])
                dependencies.customerTokens = try await CustomerTokenFixtures.verifier(CustomerTokenFixtures.harnessKeys)
                dependencies.apnsKeysChanged = { for keyring in keyrings { try? await keyring.reload() } }
                // The dispatchers start when the test says (`dispatchHeld`), and the APNs client is the harness's to close;
                // every other service of each process runs from the start, the first process's with the API.
                dependencies.processServices = processes[0].services.filter {
                    !($0 is Dispatcher) && !($0 is APNsService) && !($0 is BroadcastDispatcher)
                }
                let running = RunningTasks()
                for process in processes.dropFirst() {
                    let services = process.services.filter { !($0 is Dispatcher) && !($0 is APNsService) && !($0 is BroadcastDispatcher) }
                    running.add(Task { try await ServiceGroup(configuration: .init(services: services, logger: logger)).run() })
                }
                let dispatchersToStart = processes.compactMap(\.dispatcher)
                let startDispatching: @Sendable () -> Void = {
                    guard running.markDispatching() else { return }
                    for dispatcher in dispatchersToStart { running.add(Task { try await dispatcher.run() }) }
                }
                if !dispatchHeld { startDispatching() }
                defer { running.cancelAll() }
                let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: logger)
                try await app.test(.router) { http in
                    try await body(DeliveryHarness(
                        api: APIClient(client: http), db: db, simulator: simulator, clock: clock, registry: registry, keyrings: keyrings,
                        broadcaster: try #require(processes[0].broadcastDispatcher), startDispatching: startDispatching))
                }
                await running.stop()
            }
        } catch {
            try? await client.shutdown()
            try? await simulator.shutdown()
            throw error
        }
        try await client.shutdown()
        try await simulator.shutdown()
    }

    /// The harness's background tasks (change feeds, dispatchers), stopped together at the end of a run.
    final class RunningTasks: Sendable {
        private let state = Mutex<(tasks: [Task<Void, any Error>], dispatching: Bool)>(([], false))

        func add(_ task: Task<Void, any Error>) { state.withLock { $0.tasks.append(task) } }

        /// True the first time only: the dispatchers start once.
        func markDispatching() -> Bool {
            state.withLock { state in
                defer { state.dispatching = true }
                return !state.dispatching
            }
        }

        func cancelAll() { for task in state.withLock({ $0.tasks }) { task.cancel() } }

        func stop() async {
            for task in state.withLock({ $0.tasks }) {
                task.cancel()
                _ = await task.result
            }
        }
    }

    // MARK: - Helpers

    static func token(_ seed: UInt8, length: Int = 32) -> String {
        (0..<length).map { UInt8((Int(seed) &+ $0 &* 7) & 0xff) }.hexEncoded
    }

    /// Places an order for `customer` and returns its id.
    func place(customer: String) async throws -> String {
        try await api.createStore()
        let body = """
            {"store_id":"market-st","pos_ref":"T-1","customer_ref":"\(customer)","display_name":"Ana","locale":"en",
             "items":[{"name":"Oat latte","quantity":1}],"eta":"\(Date().addingTimeInterval(600).formatted(.iso8601))"}
            """
        let response = try await api.post("/v1/orders", as: .pos, body)
        guard let id = response.json["id"] as? String else { throw APIClient.HarnessError.unexpected(response.text) }
        return id
    }

    func event(_ id: String, _ body: String, as role: Role = .barista) async throws {
        let response = try await api.post("/v1/orders/\(id)/events", as: role, body)
        guard response.status == .ok else { throw APIClient.HarnessError.unexpected(response.text) }
    }

    func registerActivity(_ id: String, token: String) async throws {
        _ = try await api.send(.put, "/v1/orders/\(id)/live-activity-token", as: .app, body: #"{"token":"\#(token)","environment":"sandbox"}"#)
    }

    func registerCustomer(_ customer: String, kind: String, token: String) async throws {
        _ = try await api.send(.put, "/v1/customers/\(customer)/tokens/\(kind)/\(token)", as: .app, body: #"{"environment":"production"}"#)
    }

    /// Places an order for `customer` with only an alert token and makes it ready: one alert to send. Returns its id.
    func readyAlert(customer: String, token: String) async throws -> String {
        try await registerCustomer(customer, kind: "alert", token: token)
        let id = try await place(customer: customer)
        try await event(id, #"{"type":"ready","pickup_point":"counter"}"#)
        return id
    }

    /// The order's alert push in its delivery log (the one not skipped).
    func alertRow(_ id: String) async throws -> [String: Any] {
        try #require(try await deliveries(id).first { $0["push_type"] as? String == "alert" && $0["state"] as? String != "skipped" })
    }

    /// The order's delivery log.
    func deliveries(_ id: String) async throws -> [[String: Any]] {
        try await api.send(.get, "/v1/orders/\(id)/deliveries", as: .dashboard).json["deliveries"] as? [[String: Any]] ?? []
    }

    /// Waits until the order (of any tenant) has nothing pending or in flight, deferred widget pushes aside, up to a
    /// generous deadline of real time for the dispatchers' work (a guard against a hang, never reached by a passing run:
    /// 30 s was, once, on a machine at load 17); whether it drained is for the test to assert. Time is
    /// not waited for: when all the order has left is due later (a retry's backoff, a push held for a key), the clock
    /// moves to the earliest of it, which wakes the dispatchers' poll fallback; when it is due already and still not
    /// claimed (a dispatcher went to sleep just after the clock moved), the clock moves by one poll interval, as
    /// waiting would.
    @discardableResult
    func drained(_ id: String, deadline: Duration = .seconds(120)) async throws -> Bool {
        let order = try #require(UUID(uuidString: id))
        let end = ContinuousClock.now + deadline
        while ContinuousClock.now < end {
            // A widget push deferred to the end of its interval is planned for minutes later: not moved to.
            let open = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT state, run_at FROM delivery_outbox
                    WHERE order_id = \(order) AND (state = 'inflight' OR (state = 'pending' AND reason_code <> 'widget_deferred'))
                    """
                ).map { (state: try $0.decode("state", as: String.self), runAt: try $0.decode("run_at", as: Date.self)) }
            }
            if open.isEmpty { return true }
            if open.allSatisfy({ $0.state == "pending" }), let next = open.map(\.runAt).min() {
                // A microsecond more than the gap: the database keeps microseconds, so the row is due however it rounds.
                await clock.advance(max(0, next.timeIntervalSince(clock.now)) + 0.000_001)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Parsed `aps` of each request the simulator accepted for `token`, in order.
    func accepted(_ token: String) -> [(record: APNsSimulatorRecord, aps: [String: Any])] {
        simulator.records(token: token).filter { $0.status == 200 }.map { record in
            let object = (try? JSONSerialization.jsonObject(with: Data(record.body.utf8))) as? [String: Any]
            return (record, object?["aps"] as? [String: Any] ?? [:])
        }
    }
}
