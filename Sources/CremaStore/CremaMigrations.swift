public import CremaPostgres
import Foundation

/// Crema's schema (bundled with this module as resources; `sql/` links to them): the numbered files in `Migrations/`,
/// and the repeatable definitions in `Migrations/Functions/` (each the one current text of a rule the numbered files
/// first created, such as the delivery ordering), applied after them whenever their text changes.
public enum CremaMigrations {
    public static func all() throws -> MigrationSet {
        guard let directory = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw MigrationError.unreadable(path: "Migrations resource bundle")
        }
        return MigrationSet(
            numbered: try Migration.load(from: directory),
            repeatable: try RepeatableMigration.load(from: directory.appendingPathComponent("Functions")))
    }
}
