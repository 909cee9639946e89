import CremaCivilTime
public import Foundation

/// The API's JSON conventions in one place, for the server and every client alike: RFC 3339 timestamps
/// (fractional seconds accepted on input), sorted keys on output so stored idempotent answers are byte-stable.
public enum WireCoding {
    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(rfc3339(date))
        }
        return encoder
    }()

    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseRFC3339(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be an RFC 3339 timestamp")
            }
            return date
        }
        return decoder
    }()

    /// The API's timestamps: `RFC3339.text`, three fractional digits, rounded to the millisecond.
    public static func rfc3339(_ date: Date) -> String { RFC3339.text(date) }

    public static func parseRFC3339(_ text: String) -> Date? { RFC3339.date(text) }

    /// Decodes a request body, turning decoding failures into 400s that name the offending field.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(APIError) -> T {
        do {
            return try decoder.decode(T.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw .invalidField(field: path(context.codingPath + [key]), reason: "is required")
        } catch let DecodingError.valueNotFound(_, context) {
            throw .invalidField(field: path(context.codingPath), reason: "must not be null")
        } catch let DecodingError.typeMismatch(expected, context) {
            if context.codingPath.isEmpty { throw .invalidField(field: "body", reason: "must be a JSON object") }
            throw .invalidField(field: path(context.codingPath), reason: "must be \(describe(expected))")
        } catch let DecodingError.dataCorrupted(context) {
            if context.codingPath.isEmpty { throw .malformedJSON(JSONSyntaxScanner.firstError(in: data)) }
            throw .invalidField(field: path(context.codingPath), reason: context.debugDescription)
        } catch {
            throw .malformedJSON(JSONSyntaxScanner.firstError(in: data))
        }
    }

    /// `items[0].quantity`
    static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "body" : text
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "a boolean"
        case is Date.Type: "an RFC 3339 timestamp"
        default: type is any Collection.Type ? "an array" : "an object"
        }
    }

    /// The canonical JSON of a decoded request, for idempotency comparison.
    public static func canonical(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
