public import Foundation

/// A definition that is replaced rather than changed step by step (a function: `CREATE OR REPLACE`), read from a file
/// named `name.sql`. The migrator applies it after the numbered migrations whenever its text differs from the one it
/// last applied (recorded with its checksum in `schema_repeatables`), so the file is the one current definition.
///
/// Its text must be safe to run again on a database that has any earlier version of it. A change of signature drops
/// the old one first (`DROP FUNCTION IF EXISTS`), and what it needs from the tables must be there in the numbered
/// migrations of the same release.
public struct RepeatableMigration: Sendable, Hashable {
    public var name: String
    public var sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }

    /// A fingerprint of the SQL text (as a numbered migration's): the migrator re-applies the file when it changes.
    public var checksum: String { Migration.fingerprint(sql) }

    /// Reads every `name.sql` in a directory, ordered by name (the order they are applied in); other files are ignored.
    public static func load(from directory: URL) throws(MigrationError) -> [RepeatableMigration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw .unreadable(path: directory.path)
        }
        var migrations: [RepeatableMigration] = []
        for file in names.sorted() where file.hasSuffix(".sql") {
            guard let sql = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                throw .unreadable(path: file)
            }
            migrations.append(RepeatableMigration(name: String(file.dropLast(4)), sql: sql))
        }
        return migrations
    }
}
