public import Foundation

/// One numbered schema change, read from a file named `NNN_name.sql`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// A fingerprint of the SQL text (FNV-1a, 64 bit): detects a migration edited after it was applied.
    public var checksum: String { Self.fingerprint(sql) }

    /// FNV-1a (64 bit) of `text` as 16 hex digits: the checksum of numbered and repeatable migrations alike.
    static func fingerprint(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// Reads every `NNN_name.sql` in a directory, ordered by version; other files are ignored.
    public static func load(from directory: URL) throws(MigrationError) -> [Migration] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw .unreadable(path: directory.path)
        }
        var migrations: [Migration] = []
        for file in names where file.hasSuffix(".sql") {
            let stem = file.dropLast(4)
            guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]) else {
                throw .badFileName(file)
            }
            guard let sql = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else {
                throw .unreadable(path: file)
            }
            migrations.append(Migration(version: version, name: String(stem[stem.index(after: underscore)...]), sql: sql))
        }
        migrations.sort { $0.version < $1.version }
        for (a, b) in zip(migrations, migrations.dropFirst()) where a.version == b.version {
            throw .duplicateVersion(a.version)
        }
        return migrations
    }
}

/// Why migrations cannot run; `code` is stable for scripts and health checks.
public enum MigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    case badFileName(String)
    case unreadable(path: String)
    case duplicateVersion(Int)
    /// The database records a migration that is not among the files (a newer Crema migrated it).
    case unknownApplied(version: Int, name: String)
    /// A migration was changed after it was applied.
    case checksumMismatch(version: Int, name: String)

    public var code: String {
        switch self {
        case .badFileName: "migration_bad_file_name"
        case .unreadable: "migration_unreadable"
        case .duplicateVersion: "migration_duplicate_version"
        case .unknownApplied: "migration_unknown_applied"
        case .checksumMismatch: "migration_checksum_mismatch"
        }
    }

    public var description: String {
        switch self {
        case .badFileName(let file): "\(file) is not named NNN_name.sql"
        case .unreadable(let path): "cannot read migrations at \(path)"
        case .duplicateVersion(let version): "two migrations have version \(version)"
        case .unknownApplied(let version, let name):
            "the database has migration \(version)_\(name), which these files do not have: refusing to run an older Crema against it"
        case .checksumMismatch(let version, let name):
            "migration \(version)_\(name) was changed after it was applied: refusing to run"
        }
    }
}
