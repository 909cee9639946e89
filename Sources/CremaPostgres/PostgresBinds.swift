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

    public struct StringInterpolation: PostgresSQLInterpolation {
        var values: [String?] = []

        public init(literalCapacity: Int, interpolationCount: Int) { values.reserveCapacity(interpolationCount) }

        public mutating func appendLiteral(_ literal: String) {}

        public mutating func appendInterpolation(_ value: some PostgresEncodable) { values.append(value.postgresText) }

        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) { values.append(value?.postgresText) }

        public mutating func appendInterpolation(unescaped fragment: StaticString) {}

        public mutating func appendInterpolation(_ fragment: PostgresBinds) { values += fragment.values }
    }
}
