/// A statement whose SQL is written once, generic over ``PostgresSQL``, and whose text depends only on ``key`` (the
/// command, a number of rows), never on the values: its text is built the first time a key is seen and kept in the
/// shape's ``statements``; every other call builds only the values (``PostgresBinds``) and binds them to it.
public protocol PostgresStatementShape: Sendable {
    /// What the text depends on; ``PostgresFixedText`` for a statement with one text.
    associatedtype Key: Hashable & Sendable

    /// The statements built so far, one per key seen (bounded: past the table's limit a shape is sent as text).
    static var statements: PostgresStatementTable<Key> { get }

    var key: Key { get }

    /// The statement: the text (for a `PostgresQuery`) and the values, written once for both.
    func sql<SQL: PostgresSQL>() -> SQL
}

/// The key of a shape with one text.
public struct PostgresFixedText: Hashable, Sendable {}

extension PostgresStatementShape where Key == PostgresFixedText {
    public var key: PostgresFixedText { PostgresFixedText() }
}

extension PostgresStatementShape {
    /// The statement for this call: the kept text of its shape with this call's values; the first call of a shape
    /// builds and keeps the text. Inlinable, so that the caller's module specializes `sql()` for its shape (called
    /// through the protocol, the generic function looked up metadata for every interpolation).
    @inlinable
    public var query: PostgresQuery {
        let binds: PostgresBinds = sql()
        if let statement = Self.statements[key] { return statement.bind(binds) }
        let query: PostgresQuery = sql()
        assert(query.binds == binds.values, "a shape's values differ between its two builds")
        return Self.statements.keep(PostgresStatement(query), for: key)?.bind(binds) ?? query
    }
}
