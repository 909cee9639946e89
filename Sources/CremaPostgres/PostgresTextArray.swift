import Foundation

/// A list of strings sent as a PostgreSQL `text[]` literal (`{"a","b"}`), quoted so any text survives.
public struct PostgresTextArray: PostgresEncodable, Hashable {
    public var elements: [String]

    public init(_ elements: [String]) { self.elements = elements }

    public var postgresText: String {
        let quoted = elements.map { element in
            "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}
