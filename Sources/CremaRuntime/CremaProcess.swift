public import CremaClock
public import CremaCore
public import CremaDelivery
public import CremaPostgres
public import CremaService
public import CremaSettings
public import CremaStore
public import Foundation
public import Logging
public import Prometheus
public import ServiceLifecycle

/// The one place a Crema process is wired: `crema serve`, `crema dispatch` and the test harnesses all build their
/// parts here (one pool, one change feed, one clock, one registry shared by all) and start them in `services`' order.
///
/// The HTTP side is not built here, so that `crema dispatch` and the delivery workers reach no HTTP server code:
/// `crema serve` hands `services` to `CremaApplication.build`, which runs them first and its own parts after them.
public struct CremaProcess: Sendable {
    /// Which background workers a process runs beside its shared parts.
    public struct Workers: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The APNs outbox dispatcher (needs `Setup.apns`).
        public static let pushes = Workers(rawValue: 1 << 0)
        /// The webhook dispatcher.
        public static let webhooks = Workers(rawValue: 1 << 1)
        /// The lifecycle sweeper: overdue orders closed, personal data past retention removed.
        public static let lifecycle = Workers(rawValue: 1 << 2)
        /// Expired Idempotency-Keys pruned.
        public static let idempotency = Workers(rawValue: 1 << 3)

        /// `crema serve`: everything runs beside the API.
        public static let serve: Workers = [.pushes, .webhooks, .lifecycle, .idempotency]
        /// `crema dispatch`: only the senders.
        public static let dispatch: Workers = [.pushes, .webhooks]
    }

    /// What the caller decides; everything else is built from it.
    public struct Setup: Sendable {
        public var pool: PostgresPool
        /// A pool on a standby (`CREMA_DATABASE_READ_URL`) for the reads `StandbyReads` may route there; nil: all on `pool`.
        public var standbyPool: PostgresPool?
        /// For the change feed's own LISTEN connection; nil hears only this process's changes (a test's).
        public var conninfo: String?
        public var workers: Workers
        public var logger: Logger
        public var registry = PrometheusCollectorRegistry()
        /// The process's one clock: the domain's `now`, and every worker's sleeps.
        public var clock = CremaClock.system
        public var makeID: @Sendable () -> UUID = UUID.init
        /// Where pushes go and what they are signed with; nil sends none (the `.pushes` worker is then left out).
        public var apns: APNsRuntime?
        /// The keyring `apns` would make otherwise (a test trusting a key of its own).
        public var keyring: SigningKeyring?
        /// Seals webhook secrets and stored `.p8` keys; nil refuses the features that need it.
        public var masterKey: MasterKey?
        /// The embedded cluster only this process uses (the simulator may then sign for every app).
        public var privateDatabase = false
        public var defaultBundleID = DeliveryPolicy.exampleBundleID
        public var limits = TenantLimits.defaults
        public var retentionDays = CremaConfiguration.defaultRetentionDays
        public var dispatcher = DispatcherConfiguration()
        public var broadcastDispatcher = BroadcastDispatcher.Configuration()
        public var webhookDispatcher = WebhookDispatcherConfiguration()
        /// The rules webhook registration and sending follow (timeouts, address checks).
        public var webhookPolicy = WebhookPolicy()
        /// Registration of receivers on private addresses (`CREMA_WEBHOOK_ALLOW_PRIVATE`).
        public var webhooksAllowPrivateAddresses = false
        /// Sending to private addresses; the same as registration unless a test separates them.
        public var webhooksSendToPrivateAddresses: Bool?

        public init(pool: PostgresPool, conninfo: String?, workers: Workers, logger: Logger) {
            self.pool = pool
            self.conninfo = conninfo
            self.workers = workers
            self.logger = logger
        }
    }

    public let setup: Setup
    /// Crema's migrations over this pool; `migrate()` applies them before anything starts.
    public let migrator: Migrator
    /// The process's one LISTEN connection: the stream hub and the dispatchers are woken through it.
    public let changes: ChangeFeed
    public let service: OrderService
    public let admin: AdminService
    /// Webhook registration and history, as the API serves it.
    public let webhooks: WebhookService
    /// The keys this process signs pushes with; nil when it sends none.
    public let keyring: SigningKeyring?
    public let dispatcher: Dispatcher?
    /// Stores' boards on APNs broadcast channels, as the API serves them (channel management needs `apns`).
    public let broadcasts: BroadcastService
    public let broadcastDispatcher: BroadcastDispatcher?
    public let webhookDispatcher: WebhookDispatcher?
    public let sweeper: LifecycleSweeper?
    /// Every long-lived part in start order; ServiceLifecycle stops them in reverse.
    public let services: [any Service]

    public init(_ setup: Setup) throws {
        self.setup = setup
        let logger = setup.logger
        migrator = Migrator(migrations: try CremaMigrations.all(), logger: logger)
        // The feed's few milliseconds of batching are I/O timing, not time the domain sees: real time, even in a test.
        let changes = ChangeFeed(pool: setup.pool, conninfo: setup.conninfo, clock: .system, logger: logger)
        let database = CremaDatabase(pool: setup.pool, reads: Self.standbyReads(setup), changes: changes, clock: setup.clock)
        let service = OrderService(
            database: database, defaultBundleID: setup.defaultBundleID, limits: setup.limits, clock: setup.clock, makeID: setup.makeID,
            receiptKey: setup.masterKey.map(DeliveryReceiptKey.init), onReceipts: ReceiptMetrics(registry: setup.registry).record)
        self.changes = changes
        self.service = service
        // One gate for every administrative and webhook POST of the process, so their duplicates meet in one place.
        let idempotency = IdempotencyGate(repository: database.idempotency, clock: setup.clock)
        admin = AdminService(database: database, masterKey: setup.masterKey, idempotency: idempotency, clock: setup.clock)
        webhooks = WebhookService.resolvingDNS(
            database: database, limits: service.limits, masterKey: setup.masterKey, allowsPrivateAddresses: setup.webhooksAllowPrivateAddresses,
            policy: setup.webhookPolicy, idempotency: idempotency, clock: setup.clock)

        var keyring: SigningKeyring?
        var dispatcher: Dispatcher?
        if setup.workers.contains(.pushes), let apns = setup.apns {
            let ring = setup.keyring
                ?? apns.keyring(
                    database: database.apnsKeys, masterKey: setup.masterKey, privateDatabase: setup.privateDatabase, clock: setup.clock, logger: logger)
            keyring = ring
            var configuration = setup.dispatcher
            if configuration.receiptKey == nil { configuration.receiptKey = setup.masterKey.map(DeliveryReceiptKey.init) }
            dispatcher = Dispatcher(
                store: database.deliveries, client: apns.client, keyring: ring, apnsKeys: database.apnsKeys, changes: changes,
                configuration: configuration, clock: setup.clock, registry: setup.registry, logger: logger)
        }
        self.keyring = keyring
        self.dispatcher = dispatcher
        var channels: APNsBroadcastChannels?
        if let apns = setup.apns, let keyring { channels = APNsBroadcastChannels(client: apns.client, keyring: keyring) }
        let broadcasts = BroadcastService(
            database: database, channels: channels, idempotency: idempotency, defaultBundleID: setup.defaultBundleID, clock: setup.clock,
            makeID: setup.makeID)
        self.broadcasts = broadcasts
        if let apns = setup.apns, let keyring, let channels {
            broadcastDispatcher = BroadcastDispatcher(
                service: broadcasts, channels: channels, client: apns.client, keyring: keyring, configuration: setup.broadcastDispatcher,
                clock: setup.clock, registry: setup.registry, logger: logger)
        } else {
            broadcastDispatcher = nil
        }

        var webhookDispatcher: WebhookDispatcher?
        if setup.workers.contains(.webhooks) {
            var settings = setup.webhookDispatcher
            settings.policy = setup.webhookPolicy
            // Sending checks addresses again (DNS may have moved since registration), by its own setting.
            let sending = WebhookService.resolvingDNS(
                database: database, limits: service.limits, masterKey: setup.masterKey,
                allowsPrivateAddresses: setup.webhooksSendToPrivateAddresses ?? setup.webhooksAllowPrivateAddresses, policy: setup.webhookPolicy,
                idempotency: idempotency, clock: setup.clock)
            webhookDispatcher = try WebhookDispatcher(
                service: sending, changes: changes, configuration: settings, clock: setup.clock, registry: setup.registry, logger: logger)
        }
        self.webhookDispatcher = webhookDispatcher
        sweeper = setup.workers.contains(.lifecycle)
            ? LifecycleSweeper(service: service, retentionDays: setup.retentionDays, clock: setup.clock, registry: setup.registry, logger: logger)
            : nil

        // The start order is the dependency order, and ServiceLifecycle stops in reverse, so each part outlives what
        // uses it: the pool closer (first) closes the pool after everything that queries it has stopped; the APNs
        // client and simulator outlive the dispatcher sending through them; the change feed outlives its subscribers
        // (the dispatchers here, the stream hub after them), so they hear the last changes; the workers come last,
        // and whatever the caller runs after `services` (the HTTP side, its server last of all) stops first, so no
        // request reaches a stopped worker.
        var services: [any Service] = [PoolCloser(pool: setup.pool)] + (setup.standbyPool.map { [PoolCloser(pool: $0)] } ?? [])
        if let apns = setup.apns { services.append(apns.service) }
        services.append(changes)
        if setup.workers.contains(.idempotency) { services.append(IdempotencyJanitor(idempotency: database.idempotency, clock: setup.clock, logger: logger)) }
        if let dispatcher { services.append(dispatcher) }
        if let broadcastDispatcher { services.append(broadcastDispatcher) }
        if let webhookDispatcher { services.append(webhookDispatcher) }
        if let sweeper { services.append(sweeper) }
        self.services = services
    }

    /// Brings the schema up to date (safe beside other processes doing the same: the migrator locks).
    public func migrate() async throws {
        _ = try await setup.pool.withConnection { connection in try await migrator.migrate(on: connection) }
    }

    public var pool: PostgresPool { setup.pool }
    /// The database as the HTTP side's operational routes report it: readiness against `migrator`, the pool's use.
    public var health: DatabaseHealth { DatabaseHealth(pool: pool, migrator: migrator) }
    public var database: CremaDatabase { service.database }
    public var registry: PrometheusCollectorRegistry { setup.registry }
}

extension CremaProcess.Setup {
    /// Takes what the environment said (`CremaConfiguration`) for every part built here.
    public mutating func configure(_ configuration: CremaConfiguration) {
        defaultBundleID = configuration.apns.bundleID
        limits = configuration.limits
        retentionDays = configuration.retentionDays
        webhooksAllowPrivateAddresses = configuration.webhookAllowsPrivateAddresses
        webhookDispatcher.trustRootsPEMFile = configuration.webhookCAFile
    }
}
