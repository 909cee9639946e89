public import Foundation

/// A Swift value that can be sent to PostgreSQL as a text-format parameter.
public protocol PostgresEncodable: Sendable {
    /// The value in PostgreSQL's text input format.
    var postgresText: String { get }
}

extension String: PostgresEncodable {
    public var postgresText: String { self }
}

extension Int: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Double: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Bool: PostgresEncodable {
    public var postgresText: String { self ? "t" : "f" }
}

extension UUID: PostgresEncodable {
    public var postgresText: String { lowercasedText }
}

extension Date: PostgresEncodable {
    public var postgresText: String { PostgresTimestamp.format(self) }
}

/// JSON that is already encoded, sent as `json`/`jsonb` text.
public struct PostgresJSON: PostgresEncodable, Hashable {
    public var text: String

    public init(text: String) { self.text = text }

    /// Encodes a value with the given encoder (sorted keys by default, so equal values compare equal as text).
    public init(encoding value: some Encodable, encoder: JSONEncoder = PostgresJSON.encoder) throws {
        self.text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public var postgresText: String { text }

    /// One configured encoder shared by every value (making one per value showed in profiles); internal, so that no
    /// other module can reconfigure it for everyone.
    @usableFromInline static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}
