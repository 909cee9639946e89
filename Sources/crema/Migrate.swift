import ArgumentParser
import CremaPostgres
import CremaRuntime
import CremaServer
import CremaSettings
import CremaStore

extension Crema {
    /// `crema migrate`: apply the numbered migrations in `sql/`, or report where the database stands. On a Citus
    /// coordinator it then places the schema on the cluster (`CitusDistribution`); on plain PostgreSQL it never does.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply pending schema migrations (safe to run twice; refuses a database whose migrations differ).",
            discussion: """
                On a database where the citus extension is installed (a Citus coordinator), migrate then distributes \
                every tenant-owned table by tenant_id, co-located with stores, and makes the small shared tables \
                (\(CitusDistribution.referenceTables.joined(separator: ", "))) reference tables, in one transaction, \
                saying what it did; tables already placed are left alone, so running it again changes nothing. \
                Without the extension nothing of this runs. See docs/scaling.md, "Past one primary".
                """)

        @Flag(help: "Only report applied and pending migrations.") var status = false
        @Flag(
            name: .customLong("check-citus"),
            help: "Only print how Citus holds each table (distributed, reference, local); exit 1 if a table is not where migrate puts it.")
        var checkCitus = false

        func run() async throws {
            let configuration = try Runtime.configuration(readsAPIKeys: false)
            let logger = Runtime.bootstrapLogging(level: configuration.logLevel)
            let database = try await Runtime.database(configuration, logger: logger)
            let connection = try await PostgresConnection.connect(database.conninfo, logger: logger)
            let migrator = Migrator(migrations: try CremaMigrations.all(), logger: logger)
            do {
                if checkCitus {
                    try await Self.checkCitus(on: connection)
                } else if status {
                    let state = try await migrator.status(on: connection)
                    say("applied: \(state.applied.map(String.init).joined(separator: " "))")
                    say("pending: \(state.pending.isEmpty ? "none" : state.pending.map(String.init).joined(separator: " "))")
                    say("definitions to apply (sql/Functions): \(state.pendingRepeatable.isEmpty ? "none" : state.pendingRepeatable.joined(separator: " "))")
                } else {
                    let applied = try await migrator.migrate(on: connection)
                    say(applied.isEmpty ? "The database is up to date." : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
                    let citus = CitusDistribution()
                    if try await citus.isInstalled(on: connection) {
                        let steps = try await citus.distribute(on: connection)
                        say(steps.isEmpty ? "Citus: every table is already placed." : steps.map { "Citus: \($0)." }.joined(separator: "\n"))
                    }
                }
            } catch let error as MigrationError {
                await connection.close()
                try? await database.stopClusterIfStartedHere()
                throw StartupError(message: "\(error.code): \(error)")
            } catch let error as CitusDistributionError {
                await connection.close()
                try? await database.stopClusterIfStartedHere()
                throw StartupError(message: "\(error.code): \(error)")
            } catch let error as ExitCode {
                await connection.close()
                try? await database.stopClusterIfStartedHere()
                throw error
            }
            await connection.close()
            try await database.stopClusterIfStartedHere()
        }

        /// Prints each table's placement; fails when Citus is missing or a table is not where `migrate` puts it.
        static func checkCitus(on connection: PostgresConnection) async throws {
            let citus = CitusDistribution()
            guard try await citus.isInstalled(on: connection) else {
                say("The citus extension is not installed in this database: every table is a plain PostgreSQL table.")
                throw ExitCode.failure
            }
            let placements = try await citus.placements(on: connection)
            let width = placements.map(\.table.count).max() ?? 0
            var misplaced = 0
            for placement in placements {
                let detail = placement.kind == "distributed"
                    ? "distributed by \(placement.column), co-location \(placement.colocation), \(placement.shards) shards"
                    : placement.kind == "reference" ? "reference (a copy on every node)" : placement.kind
                let mark = placement.expected == placement.kind ? "" : "   <- expected \(placement.expected)"
                if !mark.isEmpty { misplaced += 1 }
                say(placement.table + String(repeating: " ", count: width - placement.table.count) + "  " + detail + mark)
            }
            if misplaced > 0 {
                say("\(misplaced) tables are not where crema migrate puts them: run crema migrate.")
                throw ExitCode.failure
            }
        }
    }
}
