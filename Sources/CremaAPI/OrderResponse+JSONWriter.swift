public import CremaAPNsProtocol
import CremaCore
import Foundation

extension OrderResponse {
    /// The order as `WireCoding.encoder` writes it, byte for byte, without going through `JSONEncoder`: the answer to
    /// every order command is this document, and the encoder's boxing was most of its cost (docs/benchmarks.md).
    public func wireJSON() throws -> String {
        var writer = JSONWriter(escapingSlashes: false)
        try encode(to: &writer)
        return writer.text
    }

    /// Keys in the encoder's sorted (code-point) order, every key present as `encode(to: any Encoder)` writes them;
    /// `events` and `projection`, only on reads, are spliced in from the encoder. `OrderResponseJSONWriterTests`
    /// holds the bytes to `WireCoding.encoder`'s.
    public func encode(to writer: inout JSONWriter) throws {
        writer.beginObject()
        writer.key("allowed_events")
        writer.beginArray()
        for event in allowedEvents { writer.string(event.rawValue) }
        writer.endArray()
        writer.key("barista")
        writer.string(barista)
        writer.key("cancel_reason")
        writer.string(cancelReason)
        writer.key("customer_ref")
        writer.string(customerRef)
        writer.key("delay_reason")
        writer.string(delayReason)
        writer.key("display_name")
        writer.string(displayName)
        writer.key("eta")
        writer.string(WireCoding.rfc3339(eta))
        if let events {
            writer.key("events")
            writer.json(try WireCoding.encoder.encode(events))
        }
        writer.key("id")
        writer.string(lowercased: id)
        writer.key("items")
        writer.beginArray()
        for item in items { item.encode(to: &writer) }
        writer.endArray()
        writer.key("locale")
        writer.string(locale)
        writer.key("number")
        writer.number(number)
        writer.key("pickup_point")
        writer.string(pickupPoint)
        writer.key("placed_at")
        writer.string(WireCoding.rfc3339(placedAt))
        writer.key("pos_ref")
        writer.string(posRef)
        if let projection {
            writer.key("projection")
            if let projection {
                writer.json(try WireCoding.encoder.encode(projection))
            } else {
                writer.null()
            }
        }
        writer.key("state")
        writer.string(state.rawValue)
        writer.key("store_id")
        writer.string(storeID)
        writer.key("updated_at")
        writer.string(WireCoding.rfc3339(updatedAt))
        writer.key("version")
        writer.number(version)
        writer.endObject()
    }
}

extension ItemResponse {
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("modifiers")
        writer.beginArray()
        for modifier in modifiers { writer.string(modifier) }
        writer.endArray()
        writer.key("name")
        writer.string(name)
        writer.key("quantity")
        writer.number(quantity)
        writer.key("size")
        writer.string(size)
        writer.endObject()
    }
}
