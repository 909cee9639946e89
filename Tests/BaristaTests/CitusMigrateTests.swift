import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

/// `crema migrate` places the schema on Citus only where the `citus` extension is installed (issue #44); on plain
/// PostgreSQL, which CI runs, it must change nothing. scripts/citus-test covers the Citus side on a real cluster.
@Suite struct CitusMigrateTests {
    @Test("on plain PostgreSQL crema migrate says nothing of Citus and --check-citus refuses, naming the missing extension")
    func plainPostgreSQLIsLeftAlone() async throws {
        // The shared test cluster itself, never a Citus coordinator's test database (scripts/citus-test).
        try await TestDatabase.with(server: try TestDatabase.serverConninfo()) { database in
            let keys = "SELECT string_agg(conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid), E'\\n' ORDER BY conname) FROM pg_constraint WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
            let before = try await database.scalar(PostgresQuery(unsafeSQL: keys), as: String.self)
            let environment = [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "CREMA_DATABASE_URL": database.conninfo,
            ]
            let migrated = try await Crema.run(Binaries.crema, ["migrate"], environment: environment)
            #expect(migrated.status == 0, "\(migrated)")
            #expect(migrated.stdout.contains("The database is up to date."), "\(migrated)")
            #expect(!migrated.stdout.contains("Citus"), "\(migrated)")
            let check = try await Crema.run(Binaries.crema, ["migrate", "--check-citus"], environment: environment)
            #expect(check.status == 1, "\(check)")
            #expect(check.stdout.contains("citus extension is not installed"), "\(check)")
            // Every foreign key the migrations made is there as they made it: none was dropped to be re-created.
            #expect(try await database.scalar(PostgresQuery(unsafeSQL: keys), as: String.self) == before)
            #expect(before.contains("order_events"))
        }
    }
}
