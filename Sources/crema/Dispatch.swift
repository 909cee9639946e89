import ArgumentParser
import CremaClock
import CremaDelivery
import CremaPostgres
import CremaRuntime
import CremaSettings
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
            let clock = CremaClock.system
            let apns = try await APNsRuntime.start(configuration.apns, dataDirectory: configuration.embeddedDirectory, clock: clock, logger: logger)
            say(apns.summary(privateDatabase: database.cluster != nil))
            let pool = PostgresPool(.init(conninfo: database.conninfo, maxConnections: workers + 2), logger: logger)
            var setup = CremaProcess.Setup(pool: pool, conninfo: database.conninfo, workers: .dispatch, logger: logger)
            setup.configure(configuration)
            setup.clock = clock
            setup.apns = apns
            setup.masterKey = try Runtime.masterKey(configuration, privateDatabase: database.cluster != nil)
            setup.privateDatabase = database.cluster != nil
            setup.dispatcher.batchSize = batchSize
            setup.dispatcher.workers = workers
            setup.dispatcher.lease = .seconds(leaseSeconds)
            let process = try CremaProcess(setup)
            try await process.migrate()
            let group = ServiceGroup(
                configuration: .init(services: process.services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
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
