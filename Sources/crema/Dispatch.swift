import ArgumentParser
import CremaClock
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaServer
import CremaService
import CremaStore
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import UnixSignals

extension Crema {
    /// `crema dispatch`: only the outbox dispatcher, for deployments that scale sending apart from the API.
    struct Dispatch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the delivery outbox to APNs, and webhooks to their receivers (without serving the API).",
            discussion: """
                Wakes on PostgreSQL NOTIFY with a 1 s poll fallback, claims due pushes with FOR UPDATE SKIP LOCKED \
                under a lease, sends them over HTTP/2 and records the outcomes. Several dispatchers (and \
                `crema serve`, which runs one too) can share a database. Uses the same CREMA_DATABASE_URL and \
                CREMA_APNS_* variables as `crema serve`; with no Apple key it sends to an in-process simulator.
                """)

        @Option(help: "Pushes in flight per worker; claims and records are batched up to it.") var batchSize = 64
        @Option(help: "Concurrent claim–send–record loops.") var workers = 2
        @Option(help: "Lease in seconds: rows held by a dispatcher that dies come back after this.") var leaseSeconds = 60

        func run() async throws {
            let configuration = try Runtime.configuration(readsAPIKeys: false)
            let logger = Runtime.bootstrapLogging(level: configuration.logLevel)
            let database = try await Runtime.database(configuration, logger: logger)
            let pool = PostgresPool(.init(conninfo: database.conninfo, maxConnections: workers + 2), logger: logger)
            let migrator = Migrator(migrations: try CremaMigrations.all(), logger: logger)
            _ = try await pool.withConnection { connection in try await migrator.migrate(on: connection) }
            let apns = try await APNsRuntime.start(configuration.apns, dataDirectory: configuration.embeddedDirectory, logger: logger)
            say(apns.summary(privateDatabase: database.cluster != nil))
            let keys = APNsKeyRepository(pool: pool)
            let masterKey = try Runtime.masterKey(configuration, privateDatabase: database.cluster != nil)
            let keyring = apns.keyring(
                database: keys, masterKey: masterKey, privateDatabase: database.cluster != nil, logger: logger)
            var settings = DispatcherConfiguration()
            settings.batchSize = batchSize
            settings.workers = workers
            settings.lease = .seconds(leaseSeconds)
            let changes = ChangeFeed(pool: pool, conninfo: database.conninfo, clock: .system, logger: logger)
            let dispatcher = Dispatcher(
                store: DeliveryRepository(pool: pool), client: apns.client, keyring: keyring, apnsKeys: keys, changes: changes,
                configuration: settings, clock: .system, registry: PrometheusCollectorRegistry(), logger: logger)
            let store = CremaDatabase(pool: pool)
            var webhookSettings = WebhookDispatcherConfiguration()
            webhookSettings.trustRootsPEMFile = configuration.webhookCAFile
            let webhooks = try WebhookDispatcher(
                service: WebhookService.resolvingDNS(
                    database: store, limits: TenantLimitsDirectory(defaults: configuration.limits, repository: store.limits, clock: .system),
                    masterKey: masterKey, allowsPrivateAddresses: configuration.webhookAllowsPrivateAddresses, clock: .system),
                changes: changes, configuration: webhookSettings, clock: .system, registry: PrometheusCollectorRegistry(), logger: logger)
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: apns.service), .init(service: changes), .init(service: dispatcher), .init(service: webhooks)],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            say("Crema dispatcher running (Ctrl-C to stop)")
            do {
                try await group.run()
            } catch {
                await pool.close()
                try? await database.stopClusterIfStartedHere()
                throw error
            }
            await pool.close()
            try await database.stopClusterIfStartedHere()
        }
    }
}
