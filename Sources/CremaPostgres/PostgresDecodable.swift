public import Foundation

/// A Swift type that can be read from a text-format result value.
public protocol PostgresDecodable: Sendable {
    /// Decodes PostgreSQL's text output; nil when the text is not a valid value of this type.
    init?(postgresText text: String)
}

extension String: PostgresDecodable {
    public init?(postgresText text: String) { self = text }
}

extension Int: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
}

extension Int32: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
}

extension Int64: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
}

extension Double: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text) }
}

extension Bool: PostgresDecodable {
    public init?(postgresText text: String) {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresText text: String) { self.init(canonicalText: text) }
}

extension Date: PostgresDecodable {
    public init?(postgresText text: String) {
        guard let date = PostgresTimestamp.parse(text) else { return nil }
        self = date
    }
}

extension PostgresJSON: PostgresDecodable {
    public init?(postgresText text: String) { self.init(text: text) }

    /// Decodes the JSON into a `Decodable` type. An empty array (`[]`: most aggregates of an order's tokens and pushes)
    /// into an `Array` is made without a decoder, which costs more to set up than the answer; into anything else (a
    /// `String` or `Data` would be an empty collection too) it goes to the decoder, which refuses it.
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = PostgresJSON.decoder) throws -> T {
        if text == "[]", let array = T.self as? any EmptyJSONArray.Type, let empty = array.empty as? T {
            return empty
        }
        return try decoder.decode(T.self, from: Data(text.utf8))
    }

    /// One configured decoder shared by every value, internal like ``PostgresJSON/encoder``.
    @usableFromInline static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// What an empty JSON array decodes into without a decoder: arrays only.
protocol EmptyJSONArray {
    static var empty: Self { get }
}

extension Array: EmptyJSONArray {
    static var empty: Self { [] }
}
