import ArgumentParser
import CremaClock
import CremaCore
import CremaDelivery
import CremaPostgres
import CremaServer
import CremaRuntime
import CremaService
import CremaSettings
import CremaStore
import Foundation
import Hummingbird
import Logging

extension Crema {
    /// `crema serve`: the HTTP API, on the configured database or the embedded default.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the HTTP API (migrating the database first).",
            discussion: """
                With no CREMA_DATABASE_URL and no PG* variables, runs a private PostgreSQL cluster under \
                .crema/postgres, seeds a demo store 'demo', generates an API key per role (kept in \
                .crema/api-keys, the admin key included) and prints them. The cluster is stopped on SIGINT/SIGTERM. With no \
                CREMA_APNS_KEY_FILE, pushes go to a built-in APNs simulator (HTTP/2 + TLS on 127.0.0.1, its \
                certificate in .crema/apns-sim/); the outbox dispatcher runs inside serve either way, and so does the \
                webhook dispatcher. With no CREMA_MASTER_KEY, the private cluster's secrets (webhook secrets, stored .p8 \
                keys) are sealed with a key generated once into .crema/master-key. With CREMA_DATABASE_READ_URL, the \
                board, the stream, order lists and /v1/me reads go to that standby whenever it has replayed what the \
                primary had committed when the read began, and to the primary otherwise.
                """)

        @Option(help: "Listen address (overrides CREMA_HTTP_HOST; default 127.0.0.1).") var host: String?
        @Option(help: "Listen port (overrides CREMA_HTTP_PORT; default 8080; 0 picks a free port).") var port: Int?

        func run() async throws {
            var configuration = try Runtime.configuration()
            if let host { configuration.host = host }
            if let port { configuration.port = port }
            // Checked before anything starts, so a missing setting is one line and exit 78, never a trap.
            if configuration.database != .embedded, configuration.apiKeys.isEmpty {
                throw StartupError.configuration(
                    "CREMA_API_KEYS is not set: with CREMA_DATABASE_URL (or PG* variables) Crema needs role:key pairs, "
                        + "e.g. CREMA_API_KEYS=pos:till-key-8f2a61c0d5e9,barista:bar-key-4b7a8c3e1f6d (keys of 16+ characters)")
            }
            // The process's one clock, given to everything that reads the time or waits (CremaProcess.Setup.clock).
            let clock = CremaClock.system
            // Keys are parsed before anything starts too: a bad es256 PEM is one line, not a half-started server.
            var customerTokens: CustomerTokenVerifier?
            if let settings = configuration.customerTokens {
                do {
                    customerTokens = try await CustomerTokenVerifier(settings, clock: clock)
                } catch {
                    throw StartupError.configuration("CREMA_CUSTOMER_JWT_KEYS has an es256 key that is not a PEM P-256 public key")
                }
            }
            let logger = Runtime.bootstrapLogging(level: configuration.logLevel)
            // One serve per private cluster; a cluster left running by a run that crashed is this run's to stop.
            var lock: ServeLock?
            var previous = ServeLock.Previous.none
            if configuration.database == .embedded { (lock, previous) = try ServeLock.acquire(in: configuration.embeddedDirectory) }
            defer { lock?.release() }
            var database = try await Runtime.database(configuration, logger: logger)
            if lock != nil, database.cluster != nil, !database.startedCluster {
                let who = if case .crashed(let pid) = previous { "by an earlier crema serve (pid \(pid)) that did not stop it" } else { "by an earlier run" }
                say("The private PostgreSQL cluster was left running \(who); this run stops it when it ends.")
                database.startedCluster = true
            }
            let cluster = database.cluster
            let conninfo = database.conninfo

            let masterKey = try Runtime.masterKey(configuration, privateDatabase: cluster != nil)
            let apns: APNsRuntime
            do {
                apns = try await APNsRuntime.start(configuration.apns, dataDirectory: configuration.embeddedDirectory, clock: clock, logger: logger)
            } catch {
                try? await database.stopClusterIfStartedHere()
                throw error
            }
            let pool = PostgresPool(.init(conninfo: conninfo, maxConnections: configuration.poolSize), logger: logger)
            var setup = CremaProcess.Setup(pool: pool, conninfo: conninfo, workers: .serve, logger: logger)
            // A read that finds no standby connection free within 100 ms is served by the primary instead of waiting.
            setup.standbyPool = configuration.readDatabaseURL.map {
                PostgresPool(.init(conninfo: $0, maxConnections: configuration.poolSize, acquireTimeout: .milliseconds(100)), logger: logger)
            }
            setup.configure(configuration)
            setup.clock = clock
            setup.apns = apns
            setup.masterKey = masterKey
            setup.privateDatabase = cluster != nil
            let process = try CremaProcess(setup)
            do {
                try await process.migrate()
            } catch {
                await pool.close()
                await setup.standbyPool?.close()
                try? await apns.service.close()
                try? await database.stopClusterIfStartedHere()
                throw error
            }

            var keys = configuration.apiKeys
            if let cluster {
                keys = try Self.embeddedKeys(configured: keys, directory: configuration.embeddedDirectory)
                _ = try await Self.seedDemoStore(process.database.stores)
                say("Crema is using its private PostgreSQL cluster: \(cluster.conninfo)")
            }
            // Only keys Crema generated itself are printed; configured keys are secrets and never echoed.
            if cluster != nil, configuration.apiKeys.isEmpty {
                say("API keys (Authorization: Bearer <key>; saved in \(configuration.embeddedDirectory.path)/api-keys):")
                for role in Role.keyRoles { if let key = keys.key(for: role) { say("  \(role.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(key)") } }
            }

            say(apns.summary(privateDatabase: cluster != nil))
            if let settings = configuration.customerTokens { say("Customer tokens (/v1/me): \(settings)") }

            let host = configuration.host
            var dependencies = CremaApplication.Dependencies(
                health: process.health, service: process.service, admin: process.admin, webhooks: process.webhooks, broadcasts: process.broadcasts, keys: keys,
                registry: process.registry)
            dependencies.customerTokens = customerTokens
            dependencies.processServices = process.services
            if let keyring = process.keyring {
                dependencies.apnsKeysChanged = {
                    do { try await keyring.reload() } catch { logger.warning("could not reload APNs keys", metadata: ["error": "\(error)"]) }
                }
            }
            // What the listening line needs, fixed before the server starts (the closure runs on another task).
            let boardKeys = cluster != nil && configuration.apiKeys.isEmpty ? keys : nil
            let demoStore = cluster != nil
            let urlFile = apns.simulatorURLFile(dataDirectory: configuration.embeddedDirectory, privateDatabase: cluster != nil)
            let app = CremaApplication.build(
                dependencies, host: host, port: configuration.port, logger: logger, limits: configuration.connectionLimits
            ) { port in
                // Published before the line, so whoever waits for the line finds the file.
                urlFile?.publish()
                say(Self.boardLine(host: host, port: port, demoStore: demoStore, generatedKeys: boardKeys))
                say("Crema is listening on http://\(host):\(port) (Ctrl-C to stop)")
            }
            do {
                try await app.runService()
            } catch {
                urlFile?.withdraw()
                try? await database.stopClusterIfStartedHere()
                throw error
            }
            urlFile?.withdraw()
            try await database.stopClusterIfStartedHere()
        }

        /// Keys for the embedded default: the configured ones, else those saved in `.crema/api-keys`,
        /// else new random ones (saved with mode 0600 so restarts keep them).
        static func embeddedKeys(configured: APIKeys, directory: URL) throws -> APIKeys {
            if !configured.isEmpty { return configured }
            let file = directory.appendingPathComponent("api-keys")
            var keys = APIKeys.generate()
            if let saved = try? String(contentsOf: file, encoding: .utf8), let existing = try? APIKeys(parsing: saved, allowsAdmin: true),
                !existing.isEmpty
            {
                // Keys saved before tenants had no admin key: keep them and add one.
                if existing.key(for: .admin) != nil { return existing }
                keys = existing
                try keys.addAdmin(APIKeys.generate().key(for: .admin)!)
            }
            // Created owner-only from the first byte (open with mode 0600), never world-readable in between.
            let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else { throw StartupError(message: "cannot write \(file.path)") }
            let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            try handle.write(contentsOf: Data((keys.environmentValue + "\n").utf8))
            return keys
        }

        /// Where the board page is. A key Crema generated itself goes in the fragment (never sent to a server, dropped
        /// from the address bar by the page); a configured key is a secret and is never printed.
        static func boardLine(host: String, port: Int, demoStore: Bool, generatedKeys: APIKeys?) -> String {
            let page = "http://\(host):\(port)/"
            guard demoStore else { return "The board page: \(page)?store=<store> (it asks for a dashboard key)" }
            let key = generatedKeys?.key(for: .dashboard).map { "#key=\($0)" } ?? ""
            return "The demo store's board (open it in a browser; ?store= picks another store): \(page)?store=demo\(key)"
        }

        /// The demo store the README's walk-through uses.
        static func seedDemoStore(_ stores: StoreRepository) async throws -> Bool {
            if try await stores.store(id: "demo", in: .default) != nil { return false }
            _ = try await stores.put(id: "demo", name: "Demo Café", timezone: "UTC", tenant: TenantScope.defaultTenantName)
            return true
        }
    }
}
