/// A statement and its bound values. Built by string interpolation, every interpolated value becomes a
/// `$n` parameter: values never enter the SQL text, so injection is impossible by construction.
///
///     let q: PostgresQuery = "SELECT * FROM orders WHERE order_id = \(id) AND state = \(state)"
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var sql: String
    /// Text-format parameter values; nil is SQL NULL.
    public private(set) var binds: [String?]

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

    /// The SQL without values, safe to log.
    public var description: String { sql }

    public struct StringInterpolation: StringInterpolationProtocol {
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

        /// Embeds another query (a CTE, say), renumbering its placeholders after the ones bound so far.
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            let offset = binds.count
            binds += fragment.binds
            var output = ""
            var characters = fragment.sql.makeIterator()
            var pending: Character? = characters.next()
            while let character = pending {
                pending = characters.next()
                guard character == "$", let next = pending, next.isASCII, next.isNumber else {
                    output.append(character)
                    continue
                }
                var digits = ""
                while let digit = pending, digit.isASCII, digit.isNumber {
                    digits.append(digit)
                    pending = characters.next()
                }
                output += "$\(Int(digits)! + offset)"
            }
            sql += output
        }
    }
}
