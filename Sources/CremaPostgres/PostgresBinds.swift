/// A statement's values alone, in the order its placeholders number them: what a ``PostgresStatementShape`` builds at
/// every call once its text is kept. Literals and constant fragments are skipped, so none of the text is copied.
public struct PostgresBinds: PostgresSQL {
    /// Text-format parameter values; nil is SQL NULL.
    public private(set) var values: [String?]

    public init(stringLiteral value: String) { values = [] }

    public init(stringInterpolation: StringInterpolation) { values = stringInterpolation.values }

    public init(joining parts: some Sequence<PostgresBinds>, separator: StaticString) {
        values = []
        for part in parts { values += part.values }
    }

    /// Inlinable, so that each value's text is specialized where the statement is written (another module).
    public struct StringInterpolation: PostgresSQLInterpolation {
        @usableFromInline var values: [String?] = []

        @inlinable public init(literalCapacity: Int, interpolationCount: Int) { values.reserveCapacity(interpolationCount) }

        @inlinable public mutating func appendLiteral(_ literal: String) {}

        @inlinable public mutating func appendInterpolation(_ value: some PostgresEncodable) { values.append(value.postgresText) }

        @inlinable public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) { values.append(value?.postgresText) }

        @inlinable public mutating func appendInterpolation(unescaped fragment: StaticString) {}

        @inlinable public mutating func appendInterpolation(_ fragment: PostgresBinds) { values += fragment.values }
    }
}
