public import CremaPostgres
import Foundation

/// Crema's schema: the numbered files in `sql/` (bundled with this module as resources).
public enum CremaMigrations {
    public static func all() throws -> [Migration] {
        guard let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw MigrationError.unreadable(path: "Migrations resource bundle")
        }
        return try Migration.load(from: directory)
    }
}
