import ArgumentParser
import CremaAPI
import CremaClock
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaService
import CremaSettings
import CremaStore
import Foundation

extension Crema {
    /// `crema admin`: tenants, apps, APNs keys and API keys, straight on the database (the same `AdminService` the
    /// admin HTTP routes call, so both validate, seal and hash alike).
    struct Admin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Administer tenants, apps, APNs keys and API keys (on the configured database).",
            discussion: """
                Works on CREMA_DATABASE_URL (or the embedded cluster under .crema), migrating it first. Storing a .p8 \
                in the database (--p8) needs CREMA_MASTER_KEY (base64 of 32 random bytes: openssl rand -base64 32), or \
                on the embedded cluster the key serve keeps in .crema/master-key; a key kept as a file path (--p8-path) \
                does not. Running servers pick up APNs key changes within a minute. The same operations are on the HTTP API under /v1/admin (role admin; see /openapi.yaml).
                """,
            subcommands: [
                AdminTenant.self, AdminTenants.self, AdminApp.self, AdminStore.self, AdminAPNsKey.self, AdminAPNsKeys.self, AdminAPIKey.self,
                AdminAPIKeys.self,
            ])

        /// Runs `body` with the admin service on the configured database, then closes everything it opened.
        static func withService<T>(_ body: (AdminService) async throws -> T) async throws -> T {
            let configuration = try Runtime.configuration(readsAPIKeys: false)
            let logger = Runtime.bootstrapLogging(level: configuration.logLevel == "info" ? "warning" : configuration.logLevel)
            let database = try await Runtime.database(configuration, logger: logger)
            let pool = PostgresPool(.init(conninfo: database.conninfo, maxConnections: 2), logger: logger)
            do {
                let migrator = Migrator(migrations: try CremaMigrations.all(), logger: logger)
                _ = try await pool.withConnection { connection in try await migrator.migrate(on: connection) }
                // The key serve seals with: CREMA_MASTER_KEY, or on the embedded cluster .crema/master-key, so a .p8 stored
                // here is one serve can open (and one stored by serve's admin routes is one this can replace).
                let masterKey = try Runtime.masterKey(configuration, privateDatabase: database.cluster != nil)
                let result = try await body(AdminService(database: CremaDatabase(pool: pool, clock: .system), masterKey: masterKey, clock: .system))
                await pool.close()
                try await database.stopClusterIfStartedHere()
                return result
            } catch {
                await pool.close()
                try? await database.stopClusterIfStartedHere()
                if let error = error as? StartupError { throw error }
                throw StartupError(message: Self.describe(error))
            }
        }

        /// One line for a refusal: the stable code and the sentence, as the HTTP API would answer, except that what the
        /// API calls a JSON field is named as the flag that sets it here.
        static func describe(_ error: any Error) -> String {
            guard error is APIError || error is StoreError || error is ServiceError else { return "\(error)" }
            let answer = APIError(error, uploadLimit: 0)
            switch answer {
            case .masterKeyNotConfigured:
                return "\(answer.code): Storing a .p8 key (--p8) needs CREMA_MASTER_KEY (base64 of 32 random bytes: openssl rand -base64 32); "
                    + "or keep the key as a file path with --p8-path."
            case .invalidField("p8_path", let reason):
                return "\(answer.code): --p8-path \(reason)."
            case .invalidField("p8", _):
                return "\(answer.code): give exactly one of --p8 (a .p8 file, sealed in the database) and --p8-path (kept as a path)."
            default:
                return "\(answer.code): \(answer.message)"
            }
        }
    }
}
