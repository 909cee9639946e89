/// One result row in text format, decoded on demand into typed values by column name or position.
public struct PostgresRow: Sendable {
    let columns: PostgresColumns
    let values: [String?]

    /// The column names, in result order.
    public var columnNames: [String] { columns.names }

    /// The raw text of a column; nil for SQL NULL.
    public func text(_ column: String) throws(PostgresError) -> String? {
        values[try index(of: column)]
    }

    /// Decodes a non-null column.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws(PostgresError) -> T {
        guard let text = values[try index(of: column)] else {
            throw PostgresError(.decoding, detail: "column \(column) is NULL, expected \(T.self)")
        }
        return try Self.decode(text, column: column)
    }

    /// Decodes a nullable column.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T?.Type = T?.self) throws(PostgresError) -> T? {
        guard let text = values[try index(of: column)] else { return nil }
        return try Self.decode(text, column: column) as T
    }

    /// Decodes the column at `position` (0-based), for single-column results.
    public func decode<T: PostgresDecodable>(at position: Int, as type: T.Type = T.self) throws(PostgresError) -> T {
        guard values.indices.contains(position), let text = values[position] else {
            throw PostgresError(.decoding, detail: "column \(position) is missing or NULL")
        }
        return try Self.decode(text, column: "#\(position)")
    }

    private func index(of column: String) throws(PostgresError) -> Int {
        guard let index = columns.index[column] else {
            throw PostgresError(.decoding, detail: "no column \(column) in result")
        }
        return index
    }

    private static func decode<T: PostgresDecodable>(_ text: String, column: String) throws(PostgresError) -> T {
        guard let value = T(postgresText: text) else {
            throw PostgresError(.decoding, detail: "column \(column) is not a valid \(T.self)")
        }
        return value
    }
}

/// Column names shared by every row of one result.
final class PostgresColumns: Sendable {
    let names: [String]
    let index: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name] == nil { index[name] = i }
        self.index = index
    }
}
