import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct MigratorTests {
    let files = [
        Migration(version: 1, name: "first", sql: "CREATE TABLE a (id int)"),
        Migration(version: 2, name: "second", sql: "CREATE TABLE b (id int)"),
    ]

    @Test("migrating twice applies each migration once") func migratingTwiceAppliesEachMigrationOnce() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let migrator = Migrator(migrations: files)
            #expect(try await db.pool.withConnection { try await migrator.migrate(on: $0) } == [1, 2])
            #expect(try await db.pool.withConnection { try await migrator.migrate(on: $0) } == [])
            let status = try await db.pool.withConnection { try await migrator.status(on: $0) }
            #expect(status == Migrator.Status(applied: [1, 2], pending: []))
            #expect(try await db.scalar("SELECT count(*) FROM schema_migrations", as: Int.self) == 2)
        }
    }

    @Test("a run waits while another run applies a migration, then finds it recorded and does not apply it again")
    func aRunWaitsWhileAnotherRunAppliesAMigration() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await Migrator(migrations: [files[0]]).migrate(on: $0) }
            let second = try await db.pool.withTransaction { first in
                // The first run, between locking the record and recording migration 2.
                try await first.simpleQuery("LOCK TABLE schema_migrations IN EXCLUSIVE MODE")
                let second = Task { try await db.pool.withConnection { try await Migrator(migrations: files).migrate(on: $0) } }
                try await db.untilWaiting(1)
                try await first.simpleQuery(files[1].sql)
                try await first.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES (2, 'second', \(files[1].checksum))")
                return second
            }
            #expect(try await second.value == [])
            #expect(try await db.scalar("SELECT count(*) FROM schema_migrations", as: Int.self) == 2)
        }
    }

    @Test("a failing migration is rolled back and not recorded") func aFailingMigrationIsRolledBackAndNotRecorded() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let broken = files + [Migration(version: 3, name: "broken", sql: "CREATE TABLE c (id int); SELECT * FROM nowhere")]
            await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { try await Migrator(migrations: broken).migrate(on: $0) }
            }
            let recorded = try await db.scalar("SELECT max(version) FROM schema_migrations", as: Int.self)
            let tableAbsent = try await db.scalar("SELECT to_regclass('c') IS NULL", as: Bool.self)
            #expect(recorded == 2)
            #expect(tableAbsent)
        }
    }

    @Test("an edited migration is refused") func anEditedMigrationIsRefused() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await Migrator(migrations: files).migrate(on: $0) }
            var edited = files
            edited[1].sql += " -- changed"
            let error = await #expect(throws: MigrationError.self) {
                try await db.pool.withConnection { try await Migrator(migrations: edited).migrate(on: $0) }
            }
            #expect(error == .checksumMismatch(version: 2, name: "second"))
        }
    }

    @Test("a database with migrations the files lack is refused") func aDatabaseWithMigrationsTheFilesLackIsRefused() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await Migrator(migrations: files).migrate(on: $0) }
            let error = await #expect(throws: MigrationError.self) {
                try await db.pool.withConnection { try await Migrator(migrations: [files[0]]).status(on: $0) }
            }
            #expect(error == .unknownApplied(version: 2, name: "second"))
        }
    }

    @Test("pending migrations are reported without being applied") func pendingMigrationsAreReportedWithoutBeingApplied() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let status = try await db.pool.withConnection { try await Migrator(migrations: files).status(on: $0) }
            #expect(status == Migrator.Status(applied: [], pending: [1, 2]))
            #expect(!status.isCurrent)
        }
    }

    @Test("a repeatable migration runs after the numbered ones and again only when its text changes") func aRepeatableMigrationRunsAfterTheNumberedOnesAndAgainOnlyWhenItsTextChanges() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // The view reads table b, which only the numbered migration 2 creates.
            let view = RepeatableMigration(name: "views", sql: "CREATE OR REPLACE VIEW v AS SELECT id FROM b")
            let migrator = Migrator(migrations: MigrationSet(numbered: files, repeatable: [view]))
            let before = try await db.pool.withConnection { try await migrator.status(on: $0) }
            #expect(before == Migrator.Status(applied: [], pending: [1, 2], pendingRepeatable: ["views"]))
            #expect(try await db.pool.withConnection { try await migrator.migrate(on: $0) } == [1, 2])
            #expect(try await db.pool.withConnection { try await migrator.status(on: $0) }.isCurrent)
            let applied = try await db.scalar("SELECT applied_at::text || checksum FROM schema_repeatables WHERE name = 'views'", as: String.self)
            _ = try await db.pool.withConnection { try await migrator.migrate(on: $0) }
            let unchanged = try await db.scalar("SELECT applied_at::text || checksum FROM schema_repeatables WHERE name = 'views'", as: String.self)
            #expect(unchanged == applied, "the same text is not applied again")

            var changed = view
            changed.sql = "CREATE OR REPLACE VIEW v AS SELECT id, id AS copy FROM b"
            let next = Migrator(migrations: MigrationSet(numbered: files, repeatable: [changed]))
            let stale = try await db.pool.withConnection { try await next.status(on: $0) }
            #expect(stale == Migrator.Status(applied: [1, 2], pending: [], pendingRepeatable: ["views"]))
            #expect(!stale.isCurrent)
            #expect(try await db.pool.withConnection { try await next.migrate(on: $0) } == [])
            #expect(try await db.scalar("SELECT count(*) FROM information_schema.columns WHERE table_name = 'v'", as: Int.self) == 2)
            #expect(try await db.scalar("SELECT checksum FROM schema_repeatables WHERE name = 'views'", as: String.self) == changed.checksum)
        }
    }

    @Test("a failing repeatable migration is rolled back and not recorded") func aFailingRepeatableMigrationIsRolledBackAndNotRecorded() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let broken = RepeatableMigration(name: "broken", sql: "CREATE OR REPLACE VIEW w AS SELECT 1; SELECT * FROM nowhere")
            await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { try await Migrator(migrations: MigrationSet(numbered: files, repeatable: [broken])).migrate(on: $0) }
            }
            let recorded = try await db.scalar("SELECT count(*) FROM schema_repeatables", as: Int.self)
            let viewAbsent = try await db.scalar("SELECT to_regclass('w') IS NULL", as: Bool.self)
            let numbered = try await db.scalar("SELECT count(*) FROM schema_migrations", as: Int.self)
            #expect(recorded == 0)
            #expect(viewAbsent)
            #expect(numbered == 2, "the numbered migrations before it stay applied")
        }
    }

    @Test("repeatable migration files are read in name order") func repeatableMigrationFilesAreReadInNameOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 2".write(to: directory.appendingPathComponent("ordering.sql"), atomically: true, encoding: .utf8)
        try "SELECT 1".write(to: directory.appendingPathComponent("functions.sql"), atomically: true, encoding: .utf8)
        try "notes".write(to: directory.appendingPathComponent("README"), atomically: true, encoding: .utf8)
        let loaded = try RepeatableMigration.load(from: directory)
        #expect(loaded == [RepeatableMigration(name: "functions", sql: "SELECT 1"), RepeatableMigration(name: "ordering", sql: "SELECT 2")])
    }

    @Test("migration files are read in version order") func migrationFilesAreReadInVersionOrder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 2".write(to: directory.appendingPathComponent("010_later.sql"), atomically: true, encoding: .utf8)
        try "SELECT 1".write(to: directory.appendingPathComponent("002_earlier.sql"), atomically: true, encoding: .utf8)
        try "notes".write(to: directory.appendingPathComponent("README"), atomically: true, encoding: .utf8)
        let loaded = try Migration.load(from: directory)
        #expect(loaded.map(\.version) == [2, 10])
        #expect(loaded.map(\.name) == ["earlier", "later"])
    }

    @Test("a badly named migration file is refused") func aBadlyNamedMigrationFileIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 1".write(to: directory.appendingPathComponent("first.sql"), atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.badFileName("first.sql")) { try Migration.load(from: directory) }
    }
}
