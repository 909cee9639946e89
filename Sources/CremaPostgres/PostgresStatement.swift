import Synchronization

/// A statement's text built once, with an identity: each connection prepares it at its first use and then knows it by
/// that identity, so a call sends only its values. Building the text (fragments spliced, placeholders renumbered),
/// scanning it for NUL and finding its prepared name by hashing kilobytes of it cost more than anything else the
/// driver did per event when every call rebuilt it (docs/benchmarks.md, issue #35). A statement without values
/// (`COMMIT`) is a `static let`; one written with values is a ``PostgresStatementShape``, whose table keeps one per key
/// (one for a fixed text; one per number of rows or webhooks for the order's write).
public struct PostgresStatement: Sendable {
    /// The text with its placeholders numbered, byte for byte what the server receives.
    public let sql: String
    /// Assigned when the statement is made and never reused, so a connection's prepared name cannot outlive its text.
    let id: Int
    /// libpq takes C strings: a NUL would cut the text short. Checked once, here; a query of such a statement is
    /// refused before it is sent.
    let containsNUL: Bool

    private static let serial = Atomic<Int>(0)

    /// A statement with explicit `$n` placeholders (or none).
    public init(sql: String) {
        self.sql = sql
        self.id = Self.serial.wrappingAdd(1, ordering: .relaxed).newValue
        self.containsNUL = PostgresConnection.containsNUL(sql)
    }

    /// The text of `query`, whose values are dropped: they are the first call's, and each call binds its own.
    public init(_ query: PostgresQuery) {
        self.init(sql: query.sql)
    }

    /// The statement with this call's values, in the order its placeholders number them.
    public func bind(_ binds: PostgresBinds) -> PostgresQuery {
        PostgresQuery(self, binds: binds.values)
    }

    /// The statement without values, for one that has no placeholders.
    public var query: PostgresQuery { PostgresQuery(self, binds: []) }
}
