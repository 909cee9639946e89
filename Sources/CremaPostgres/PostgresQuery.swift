/// A statement and its bound values. Built by string interpolation, every interpolated value becomes a
/// `$n` parameter: values never enter the SQL text, so injection is impossible by construction.
///
///     let q: PostgresQuery = "SELECT * FROM orders WHERE order_id = \(id) AND state = \(state)"
///
/// A statement run at every event is better written once as a ``PostgresStatementShape``: its text is then built once
/// and prepared by identity, and each call builds only its values.
public struct PostgresQuery: PostgresSQL, CustomStringConvertible {
    public private(set) var sql: String
    /// Text-format parameter values; nil is SQL NULL.
    public private(set) var binds: [String?]
    /// The kept statement whose text this is, if any: then its NUL check is done and it is prepared by identity.
    private(set) var statement: PostgresStatement?

    public init(stringLiteral value: String) {
        self.sql = value
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.binds = stringInterpolation.binds
    }

    /// A statement with explicit `$n` placeholders and their values.
    public init(unsafeSQL sql: String, binds: [String?] = []) {
        self.sql = sql
        self.binds = binds
    }

    /// A kept statement with this call's values.
    init(_ statement: PostgresStatement, binds: [String?]) {
        self.sql = statement.sql
        self.binds = binds
        self.statement = statement
    }

    /// What a connection knows the statement's prepared name by: the kept statement's identity, else its text.
    var preparedKey: PostgresPreparedKey {
        statement.map { .statement($0.id) } ?? .text(sql)
    }

    /// The SQL without values, safe to log.
    public var description: String { sql }

    public struct StringInterpolation: PostgresSQLInterpolation {
        public typealias Fragment = PostgresQuery

        var sql = ""
        var binds: [String?] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { sql += literal }

        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            binds.append(value.postgresText)
            sql += "$\(binds.count)"
        }

        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) {
            binds.append(value?.postgresText)
            sql += "$\(binds.count)"
        }

        /// Splices SQL text that is a compile-time constant (a column list, say): never a value.
        public mutating func appendInterpolation(unescaped fragment: StaticString) {
            sql += fragment.description
        }

        /// Embeds another query (a CTE, say), renumbering its placeholders after the ones bound so far. Works on UTF-8
        /// bytes, copying the text between placeholders whole: every order command embeds several kilobytes this way,
        /// and walking them a `Character` at a time was 15.7 % of `crema serve`'s samples under ingest (children
        /// included; docs/benchmarks.md).
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            let offset = binds.count
            binds += fragment.binds
            guard offset > 0 else {
                sql += fragment.sql
                return
            }
            let dollar = UInt8(ascii: "$")
            func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            let text = Array(fragment.sql.utf8)
            var output: [UInt8] = []
            output.reserveCapacity(text.count + 16)
            var copied = 0
            var index = 0
            while index < text.count {
                guard text[index] == dollar, index + 1 < text.count, isDigit(text[index + 1]) else {
                    index += 1
                    continue
                }
                output.append(contentsOf: text[copied..<index])
                var end = index + 1
                var number = 0
                while end < text.count, isDigit(text[end]) {
                    number = number * 10 + Int(text[end] - UInt8(ascii: "0"))
                    end += 1
                }
                output.append(dollar)
                output.append(contentsOf: String(number + offset).utf8)
                copied = end
                index = end
            }
            output.append(contentsOf: text[copied...])
            sql += String(decoding: output, as: UTF8.self)
        }
    }
}
