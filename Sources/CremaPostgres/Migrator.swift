public import Logging

/// Applies numbered migrations, each in its own transaction, recorded in `schema_migrations`, then the repeatable
/// ones whose text changed since they were last applied, each in its own transaction, recorded with their checksum in
/// `schema_repeatables`. Safe to run twice and from several processes at once: each migration's transaction first locks
/// the table that records it and reads it again, so two runs take turns migration by migration and none is applied
/// twice (a lock on a table, not an advisory lock, which on Citus would hold on one node only). Refuses a database whose
/// recorded numbered migrations differ from the files.
public struct Migrator: Sendable {
    /// Where a database stands against the files.
    public struct Status: Sendable, Equatable {
        public var applied: [Int]
        public var pending: [Int]
        /// Repeatable migrations never applied, or applied with other text than the files'.
        public var pendingRepeatable: [String]
        public var isCurrent: Bool { pending.isEmpty && pendingRepeatable.isEmpty }

        public init(applied: [Int], pending: [Int], pendingRepeatable: [String] = []) {
            self.applied = applied
            self.pending = pending
            self.pendingRepeatable = pendingRepeatable
        }
    }

    public let migrations: [Migration]
    /// Applied after `migrations`, in this order, whenever their text changed.
    public let repeatable: [RepeatableMigration]
    private let logger: Logger

    public init(migrations: [Migration], repeatable: [RepeatableMigration] = [], logger: Logger = Logger(label: "crema.migrate")) {
        self.migrations = migrations
        self.repeatable = repeatable
        self.logger = logger
    }

    /// A migrator for a whole schema: its numbered and its repeatable migrations.
    public init(migrations: MigrationSet, logger: Logger = Logger(label: "crema.migrate")) {
        self.init(migrations: migrations.numbered, repeatable: migrations.repeatable, logger: logger)
    }

    /// Compares the database with the files without changing anything.
    public func status(on connection: PostgresConnection) async throws -> Status {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
        guard try exists.first?.decode("present", as: Bool.self) == true else {
            return Status(applied: [], pending: migrations.map(\.version), pendingRepeatable: repeatable.map(\.name))
        }
        let recorded = try await recordedMigrations(on: connection)
        try verify(recorded)
        let applied = Set(recorded.map(\.version))
        let current = try await recordedRepeatables(on: connection)
        return Status(
            applied: recorded.map(\.version).sorted(),
            pending: migrations.map(\.version).filter { !applied.contains($0) },
            pendingRepeatable: repeatable.filter { current[$0.name] != $0.checksum }.map(\.name))
    }

    /// Applies what is pending and returns the numbered versions it applied (repeatable migrations it applied are logged).
    @discardableResult
    public func migrate(on connection: PostgresConnection) async throws -> [Int] {
        try await Self.create(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """, on: connection)
        var appliedNow: [Int] = []
        // One migration a transaction: lock the record, read it again (another run may have gone on meanwhile), apply
        // the first one missing. A second run waits on the lock and then finds it recorded.
        while true {
            try await connection.simpleQuery("BEGIN")
            do {
                try await connection.simpleQuery(
                    "SET LOCAL statement_timeout TO 0; SET LOCAL lock_timeout TO 0; LOCK TABLE schema_migrations IN EXCLUSIVE MODE")
                let recorded = try await recordedMigrations(on: connection)
                try verify(recorded)
                let done = Set(recorded.map(\.version))
                guard let migration = migrations.first(where: { !done.contains($0.version) }) else {
                    try await connection.simpleQuery("COMMIT")
                    break
                }
                do {
                    try await connection.simpleQuery(migration.sql)
                    try await connection.query(
                        """
                        INSERT INTO schema_migrations (version, name, checksum)
                        VALUES (\(migration.version), \(migration.name), \(migration.checksum))
                        """)
                    try await connection.simpleQuery("COMMIT")
                } catch {
                    logger.error("migration failed", metadata: ["migration": "\(migration.version)_\(migration.name)", "error": "\(error)"])
                    throw error
                }
                logger.info("applied migration", metadata: ["migration": "\(migration.version)_\(migration.name)"])
                appliedNow.append(migration.version)
            } catch {
                try? await connection.simpleQuery("ROLLBACK")
                throw error
            }
        }
        try await applyRepeatable(on: connection)
        return appliedNow
    }

    /// Creates a bookkeeping table if it is missing. Two runs creating it at once collide in the catalog (one of them
    /// fails with a duplicate key or a duplicate table, the other creates it), and then it exists, as asked.
    private static func create(_ table: String, on connection: PostgresConnection) async throws {
        do {
            try await connection.simpleQuery(table)
        } catch where [PostgresError.SQLState.uniqueViolation, PostgresError.SQLState.duplicateTable].contains(error.sqlState) {
            return
        }
    }

    /// After the numbered migrations (which may have changed what the definitions use): each repeatable migration whose
    /// text is not the one last applied, in its own transaction with its new checksum, read again under the record's
    /// lock as the numbered ones are.
    private func applyRepeatable(on connection: PostgresConnection) async throws {
        guard !repeatable.isEmpty else { return }
        try await Self.create(
            """
            CREATE TABLE IF NOT EXISTS schema_repeatables (
                name       text        PRIMARY KEY,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """, on: connection)
        for migration in repeatable {
            try await connection.simpleQuery("BEGIN")
            do {
                try await connection.simpleQuery(
                    "SET LOCAL statement_timeout TO 0; SET LOCAL lock_timeout TO 0; LOCK TABLE schema_repeatables IN EXCLUSIVE MODE")
                guard try await recordedRepeatables(on: connection)[migration.name] != migration.checksum else {
                    try await connection.simpleQuery("COMMIT")
                    continue
                }
                do {
                    try await connection.simpleQuery(migration.sql)
                    try await connection.query(
                        """
                        INSERT INTO schema_repeatables (name, checksum) VALUES (\(migration.name), \(migration.checksum))
                        ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = EXCLUDED.applied_at
                        """)
                    try await connection.simpleQuery("COMMIT")
                } catch {
                    logger.error("repeatable migration failed", metadata: ["migration": "\(migration.name)", "error": "\(error)"])
                    throw error
                }
                logger.info("applied repeatable migration", metadata: ["migration": "\(migration.name)", "checksum": "\(migration.checksum)"])
            } catch {
                try? await connection.simpleQuery("ROLLBACK")
                throw error
            }
        }
    }

    /// The checksum each repeatable migration was last applied with (none before the first).
    private func recordedRepeatables(on connection: PostgresConnection) async throws -> [String: String] {
        let exists = try await connection.query("SELECT to_regclass('schema_repeatables') IS NOT NULL AS present")
        guard try exists.first?.decode("present", as: Bool.self) == true else { return [:] }
        var checksums: [String: String] = [:]
        for row in try await connection.query("SELECT name, checksum FROM schema_repeatables") {
            checksums[try row.decode("name")] = try row.decode("checksum")
        }
        return checksums
    }

    /// A row of `schema_migrations`.
    private struct Applied {
        var version: Int
        var name: String
        var checksum: String
    }

    private func recordedMigrations(on connection: PostgresConnection) async throws -> [Applied] {
        try await connection.query("SELECT version, name, checksum FROM schema_migrations ORDER BY version").map { row in
            Applied(version: try row.decode("version"), name: try row.decode("name"), checksum: try row.decode("checksum"))
        }
    }

    private func verify(_ recorded: [Applied]) throws(MigrationError) {
        let files = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for row in recorded {
            guard let file = files[row.version] else { throw .unknownApplied(version: row.version, name: row.name) }
            guard file.checksum == row.checksum else { throw .checksumMismatch(version: row.version, name: row.name) }
        }
    }
}
