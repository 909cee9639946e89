import CremaAPNsProtocol
import CremaCivilTime
import CremaCore
import CremaPostgres
import Foundation

/// The columns every order query selects, and how a row becomes an `Order`.
enum OrderRow {
    static let columns: StaticString = """
        store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items, state, version, eta,
        barista, pickup_point, delay_reason, cancel_reason, placed_at, updated_at
        """

    static func order(from row: PostgresRow) throws -> Order {
        guard let state = OrderState(rawValue: try row.decode("state")) else {
            throw PostgresError(.decoding, detail: "unknown order state")
        }
        return Order(
            id: try row.decode("order_id"),
            storeID: try row.decode("store_id"),
            number: try row.decode("number"),
            posRef: try row.decode("pos_ref"),
            customerRef: try row.decode("customer_ref", as: String?.self),
            displayName: try row.decode("display_name"),
            locale: try row.decode("locale"),
            items: try row.decode("items", as: PostgresJSON.self).decode([OrderItem].self),
            eta: try row.decode("eta"),
            state: state,
            version: try row.decode("version"),
            barista: try row.decode("barista", as: String?.self),
            pickupPoint: try row.decode("pickup_point", as: String?.self),
            delayReason: try row.decode("delay_reason", as: String?.self),
            cancelReason: try row.decode("cancel_reason", as: String?.self),
            placedAt: try row.decode("placed_at"),
            updatedAt: try row.decode("updated_at"))
    }

    static func event(from row: PostgresRow) throws -> RecordedEvent {
        guard let type = OrderEventType(rawValue: try row.decode("event_type")),
            let role = Role(rawValue: try row.decode("actor_role"))
        else { throw PostgresError(.decoding, detail: "unknown event type or role") }
        return RecordedEvent(
            version: try row.decode("version"), type: type, role: role, occurredAt: try row.decode("occurred_at"),
            data: try row.decode("data", as: PostgresJSON.self).decode(JSONValue.self))
    }
}

/// What each event carries, keyed by API field names, for `order_events.data`.
enum EventData {
    static func placed(_ placement: OrderPlacement) -> JSONValue {
        [
            "pos_ref": .string(placement.posRef),
            "customer_ref": placement.customerRef.map(JSONValue.string) ?? .null,
            "display_name": .string(placement.displayName),
            "locale": .string(OrderLocale.normalized(placement.locale)),
            "eta": .string(rfc3339(placement.eta)),
            "items": .array(
                placement.items.map { item in
                    [
                        "name": .string(item.name), "size": item.size.map(JSONValue.string) ?? .null,
                        "quantity": .number(Double(item.quantity)), "modifiers": .array(item.modifiers.map(JSONValue.string)),
                    ]
                }),
        ]
    }

    static func of(_ event: OrderEvent) -> JSONValue {
        switch event {
        case .started(let barista): ["barista": .string(barista)]
        case .delayed(let eta, let reason): ["eta": .string(rfc3339(eta)), "reason": reason.map(JSONValue.string) ?? .null]
        case .ready(let pickupPoint): ["pickup_point": pickupPoint.map(JSONValue.string) ?? .null]
        case .pickedUp: [:]
        case .canceled(let reason): ["reason": .string(reason)]
        case .expired(let reason): ["reason": .string(reason.rawValue)]
        }
    }

    /// The data as `order_events.data` receives it, written directly (`JSONValue.encode(to:)`): the bytes
    /// `PostgresJSON(encoding:)` wrote, without the encoder's generic boxing, once per event.
    static func stored(_ data: JSONValue) throws -> PostgresJSON {
        var writer = JSONWriter(escapingSlashes: false, capacity: 256)
        try data.encode(to: &writer)
        return PostgresJSON(text: writer.text)
    }

    /// As the API writes it, so the data keeps the millisecond the client sent (the format style truncated it).
    static func rfc3339(_ date: Date) -> String { RFC3339.text(date) }

    /// The event `of` stored for a recorded event after `placed` (nil for `placed`, or data this version does not read):
    /// what replaying an order's history through `OrderStateMachine` needs.
    static func event(_ recorded: RecordedEvent) -> OrderEvent? {
        let data = recorded.data
        switch recorded.type {
        case .placed: return nil
        case .started: return data["barista"]?.stringValue.map { .started(barista: $0) }
        case .delayed: return eta(data).map { .delayed(eta: $0, reason: data["reason"]?.stringValue) }
        case .ready: return .ready(pickupPoint: data["pickup_point"]?.stringValue)
        case .pickedUp: return .pickedUp
        case .canceled: return .canceled(reason: data["reason"]?.stringValue ?? "")
        case .expired: return data["reason"]?.stringValue.flatMap(ExpiryReason.init).map { .expired(reason: $0) }
        }
    }

    /// The `eta` a `placed` or `delayed` event stored, as `rfc3339` wrote it.
    static func eta(_ data: JSONValue) -> Date? {
        guard let text = data["eta"]?.stringValue else { return nil }
        return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}
