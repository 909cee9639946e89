import CremaCore
import Foundation

/// `POST /v1/orders`: the `placed` event as the POS sends it.
struct PlaceOrderRequest: Codable {
    var storeID: String
    var posRef: String
    var customerRef: String?
    var displayName: String
    var locale: String
    var items: [ItemRequest]
    var eta: Date

    enum CodingKeys: String, CodingKey {
        case locale, items, eta
        case storeID = "store_id", posRef = "pos_ref", customerRef = "customer_ref", displayName = "display_name"
    }

    var placement: OrderPlacement {
        OrderPlacement(
            storeID: storeID, posRef: posRef, customerRef: customerRef, displayName: displayName, locale: locale,
            items: items.map { OrderItem(name: $0.name, size: $0.size, quantity: $0.quantity ?? 1, modifiers: $0.modifiers ?? []) },
            eta: eta)
    }
}

struct ItemRequest: Codable {
    var name: String
    var size: String?
    var quantity: Int?
    var modifiers: [String]?
}

/// `POST /v1/orders/{id}/events`: `{"type":…, "expected_version":…, …what the type carries}`.
struct OrderEventRequest: Codable {
    var type: String
    var expectedVersion: Int?
    var barista: String?
    var eta: Date?
    var reason: String?
    var pickupPoint: String?

    enum CodingKeys: String, CodingKey {
        case type, barista, eta, reason
        case expectedVersion = "expected_version", pickupPoint = "pickup_point"
    }

    /// The event this request describes; a missing field the type requires is a 400 naming it.
    func event() throws(APIError) -> OrderEvent {
        guard let type = OrderEventType(rawValue: type), type != .placed else {
            let names = OrderEventType.allCases.filter { $0 != .placed }.map(\.rawValue).joined(separator: ", ")
            throw .invalidField(field: "type", reason: "must be one of \(names) (orders are placed with POST /v1/orders)")
        }
        if let expectedVersion, expectedVersion < 1 {
            throw .invalidField(field: "expected_version", reason: "must be a positive integer")
        }
        switch type {
        case .placed: preconditionFailure("refused above")
        case .started: return .started(barista: try required(barista, "barista"))
        case .delayed: return .delayed(eta: try required(eta, "eta"), reason: reason)
        case .ready: return .ready(pickupPoint: pickupPoint)
        case .pickedUp: return .pickedUp
        case .canceled: return .canceled(reason: try required(reason, "reason"))
        }
    }

    private func required<T>(_ value: T?, _ field: String) throws(APIError) -> T {
        guard let value else { throw .invalidField(field: field, reason: "is required for a \(type) event") }
        return value
    }
}

/// `PUT /v1/stores/{store}`.
struct StorePutRequest: Codable {
    var name: String
    var timezone: String?
}

extension WireCoding {
    /// Decodes a request body, turning decoding failures into 400s that name the offending field.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(APIError) -> T {
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
            if context.codingPath.isEmpty { throw .malformedJSON }
            throw .invalidField(field: path(context.codingPath), reason: context.debugDescription)
        } catch {
            throw .malformedJSON
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
    static func canonical(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
