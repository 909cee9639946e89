import Synchronization

/// The statements a ``PostgresStatementShape`` has built, by key: shared by every connection and task, bounded by
/// `limit` (a shape past it is sent as text, prepared by the text as any `PostgresQuery`, so nothing is refused).
public final class PostgresStatementTable<Key: Hashable & Sendable>: Sendable {
    private let statements = Mutex<[Key: PostgresStatement]>([:])
    /// How many statements the table keeps.
    public let limit: Int

    public init(limit: Int) {
        precondition(limit > 0, "a statement table keeps at least one statement")
        self.limit = limit
    }

    /// The statement kept for `key`, if any.
    public subscript(key: Key) -> PostgresStatement? {
        statements.withLock { $0[key] }
    }

    /// Keeps `statement` for `key` unless the table is full; returns the statement kept for `key` (the first one when
    /// two callers built it at once), nil when full.
    public func keep(_ statement: PostgresStatement, for key: Key) -> PostgresStatement? {
        statements.withLock { kept in
            if let earlier = kept[key] { return earlier }
            guard kept.count < limit else { return nil }
            kept[key] = statement
            return statement
        }
    }

    /// How many statements are kept.
    public var count: Int { statements.withLock { $0.count } }
}
