import ArgumentParser
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaSettings
import CremaStore

extension Crema {
    /// `crema migrate`: apply the numbered migrations in `sql/`, or report where the database stands.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending schema migrations (safe to run twice; refuses a database whose migrations differ).")

        @Flag(help: "Only report applied and pending migrations.") var status = false

        func run() async throws {
            let configuration = try Runtime.configuration(readsAPIKeys: false)
            let logger = Runtime.bootstrapLogging(level: configuration.logLevel)
            let database = try await Runtime.database(configuration, logger: logger)
            let connection = try await PostgresConnection.connect(database.conninfo, logger: logger)
            let migrator = Migrator(migrations: try CremaMigrations.all(), logger: logger)
            do {
                if status {
                    let state = try await migrator.status(on: connection)
                    say("applied: \(state.applied.map(String.init).joined(separator: " "))")
                    say("pending: \(state.pending.isEmpty ? "none" : state.pending.map(String.init).joined(separator: " "))")
                    say("definitions to apply (sql/Functions): \(state.pendingRepeatable.isEmpty ? "none" : state.pendingRepeatable.joined(separator: " "))")
                } else {
                    let applied = try await migrator.migrate(on: connection)
                    say(applied.isEmpty ? "The database is up to date." : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
                }
            } catch let error as MigrationError {
                await connection.close()
                try? await database.stopClusterIfStartedHere()
                throw StartupError(message: "\(error.code): \(error)")
            }
            await connection.close()
            try await database.stopClusterIfStartedHere()
        }
    }
}
