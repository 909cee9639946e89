import CremaCore
import Foundation

// `barista`'s own reading of Crema's JSON (see /openapi.yaml). Only the fields it shows are decoded and
// unknown fields are ignored, so the server can grow without breaking the till. Event types are kept as
// strings for the same reason: an event this build does not know is shown, not rejected.

/// An order as `GET /v1/orders/{id}`, the board and the order list return it.
struct WireOrder: Codable, Sendable {
    var id: String
    var number: Int
    var storeID: String
    var displayName: String
    var locale: String?
    var items: [WireItem]
    var state: OrderState
    var version: Int
    var eta: Date?
    var barista: String?
    var pickupPoint: String?
    var delayReason: String?
    var cancelReason: String?
    var placedAt: Date
    var updatedAt: Date?
    var allowedEvents: [String]
    /// Only on `GET /v1/orders/{id}`.
    var events: [WireEvent]?

    enum CodingKeys: String, CodingKey {
        case id, number, locale, items, state, version, eta, barista, events
        case storeID = "store_id", displayName = "display_name", pickupPoint = "pickup_point"
        case delayReason = "delay_reason", cancelReason = "cancel_reason", placedAt = "placed_at"
        case updatedAt = "updated_at", allowedEvents = "allowed_events"
    }

    /// `--json` output: every key present (null when empty), so scripts can rely on the shape.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(number, forKey: .number)
        try c.encode(storeID, forKey: .storeID)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(locale, forKey: .locale)
        try c.encode(items, forKey: .items)
        try c.encode(state, forKey: .state)
        try c.encode(version, forKey: .version)
        try c.encode(eta, forKey: .eta)
        try c.encode(barista, forKey: .barista)
        try c.encode(pickupPoint, forKey: .pickupPoint)
        try c.encode(delayReason, forKey: .delayReason)
        try c.encode(cancelReason, forKey: .cancelReason)
        try c.encode(placedAt, forKey: .placedAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(allowedEvents, forKey: .allowedEvents)
        try c.encodeIfPresent(events, forKey: .events)
    }

    /// The allowed events this build knows, in the server's order.
    var allowed: [OrderEventType] { allowedEvents.compactMap(OrderEventType.init(rawValue:)) }
}

struct WireItem: Codable, Sendable {
    var name: String
    var size: String?
    var quantity: Int
    var modifiers: [String]

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        size = try c.decodeIfPresent(String.self, forKey: .size)
        quantity = try c.decodeIfPresent(Int.self, forKey: .quantity) ?? 1
        modifiers = try c.decodeIfPresent([String].self, forKey: .modifiers) ?? []
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(size, forKey: .size)
        try c.encode(quantity, forKey: .quantity)
        try c.encode(modifiers, forKey: .modifiers)
    }

    enum CodingKeys: String, CodingKey { case name, size, quantity, modifiers }
}

/// One row of an order's history.
struct WireEvent: Codable, Sendable {
    var version: Int
    var type: String
    var role: String
    var at: Date
    var data: JSONValue?
}

/// `GET /v1/stores/{store}/board`.
struct WireBoard: Codable, Sendable {
    var store: WireStore
    var columns: [String: [WireOrder]]

    /// Open orders in the order a barista works through them: by state, oldest first within each.
    func orders(in state: OrderState) -> [WireOrder] {
        (columns[state.rawValue] ?? []).sorted { ($0.placedAt, $0.number) < ($1.placedAt, $1.number) }
    }
}

struct WireStore: Codable, Sendable {
    var storeID: String
    var name: String
    var timezone: String?

    enum CodingKeys: String, CodingKey {
        case name, timezone
        case storeID = "store_id"
    }
}

/// `GET /v1/orders?store=…`: one page, oldest first.
struct WireOrderPage: Decodable, Sendable {
    var orders: [WireOrder]
    var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case orders
        case nextCursor = "next_cursor"
    }
}

/// `GET /v1/orders/{id}/preview`: what each of the customer's surfaces shows, computed now.
struct WirePreview: Codable, Sendable {
    var state: OrderState
    var version: Int
    var locale: String?
    var generatedAt: Date
    var families: Families

    enum CodingKeys: String, CodingKey {
        case state, version, locale, families
        case generatedAt = "generated_at"
    }

    /// Text fields only: layout hints and dates stay the app's business.
    struct Families: Codable, Sendable {
        var compactLeading: Text?
        var compactTrailing: Text?
        var minimal: Text?
        var small: Small?
        var lockScreen: LockScreen?
    }

    struct Text: Codable, Sendable { var text: String? }
    struct Small: Codable, Sendable {
        var title: String?
        var status: String?
    }
    struct LockScreen: Codable, Sendable {
        var title: String?
        var subtitle: String?
        var detail: String?
        var etaRelative: String?
        var etaAbsolute: String?
    }
}

/// `{"error":{"code","message","details"}}`.
struct WireErrorBody: Decodable, Sendable {
    struct Body: Decodable, Sendable {
        var code: String
        var message: String
        var details: JSONValue?
    }
    var error: Body
}

/// The JSON conventions of the API (RFC 3339 timestamps) and of `--json` output (sorted keys, one line).
enum WireCoding {
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseRFC3339(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not an RFC 3339 timestamp")
            }
            return date
        }
        return decoder
    }()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(rfc3339(date))
        }
        return encoder
    }()

    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    static func parseRFC3339(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
