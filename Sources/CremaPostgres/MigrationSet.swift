/// Everything a schema is built from: the numbered migrations, each applied once in order, and the repeatable ones,
/// applied after them whenever their text changed.
public struct MigrationSet: Sendable, Hashable {
    public var numbered: [Migration]
    public var repeatable: [RepeatableMigration]

    public init(numbered: [Migration], repeatable: [RepeatableMigration] = []) {
        self.numbered = numbered
        self.repeatable = repeatable
    }
}
