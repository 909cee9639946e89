import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct MigratorTests {
    let files = [
        Migration(version: 1, name: "first", sql: "CREATE TABLE a (id int)"),
        Migration(version: 2, name: "second", sql: "CREATE TABLE b (id int)"),
    ]

    @Test func migratingTwiceAppliesEachMigrationOnce() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let migrator = Migrator(migrations: files)
            #expect(try await db.pool.withConnection { try await migrator.migrate(on: $0) } == [1, 2])
            #expect(try await db.pool.withConnection { try await migrator.migrate(on: $0) } == [])
            let status = try await db.pool.withConnection { try await migrator.status(on: $0) }
            #expect(status == Migrator.Status(applied: [1, 2], pending: []))
            #expect(try await db.scalar("SELECT count(*) FROM schema_migrations", as: Int.self) == 2)
        }
    }

    @Test func aFailingMigrationIsRolledBackAndNotRecorded() async throws {
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

    @Test func anEditedMigrationIsRefused() async throws {
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

    @Test func aDatabaseWithMigrationsTheFilesLackIsRefused() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await Migrator(migrations: files).migrate(on: $0) }
            let error = await #expect(throws: MigrationError.self) {
                try await db.pool.withConnection { try await Migrator(migrations: [files[0]]).status(on: $0) }
            }
            #expect(error == .unknownApplied(version: 2, name: "second"))
        }
    }

    @Test func pendingMigrationsAreReportedWithoutBeingApplied() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let status = try await db.pool.withConnection { try await Migrator(migrations: files).status(on: $0) }
            #expect(status == Migrator.Status(applied: [], pending: [1, 2]))
            #expect(!status.isCurrent)
        }
    }

    @Test func migrationFilesAreReadInVersionOrder() throws {
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

    @Test func aBadlyNamedMigrationFileIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "SELECT 1".write(to: directory.appendingPathComponent("first.sql"), atomically: true, encoding: .utf8)
        #expect(throws: MigrationError.badFileName("first.sql")) { try Migration.load(from: directory) }
    }
}
