import ArgumentParser
import CremaAPI
import CremaPostgres
import CremaServer
import CremaService
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
                in the database needs CREMA_MASTER_KEY (base64 of 32 random bytes: openssl rand -base64 32); a key \
                kept as a file path (--p8-path) does not. Running servers pick up APNs key changes within a minute. \
                The same operations are on the HTTP API under /v1/admin (role admin; see /openapi.yaml).
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
                let result = try await body(AdminService(database: CremaDatabase(pool: pool), masterKey: configuration.masterKey, configuredBundleID: configuration.apns.bundleID))
                await pool.close()
                try await database.stopClusterIfStartedHere()
                return result
            } catch {
                await pool.close()
                try? await database.stopClusterIfStartedHere()
                throw RuntimeError(message: Self.describe(error))
            }
        }

        /// One line for a refusal: the stable code and the sentence, as the HTTP API would answer.
        static func describe(_ error: any Error) -> String {
            guard error is APIError || error is StoreError else { return "\(error)" }
            let answer = APIError(error, uploadLimit: 0)
            return "\(answer.code): \(answer.message)"
        }
    }
}
