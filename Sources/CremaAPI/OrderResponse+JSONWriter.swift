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
        writer.member("barista", barista)
        writer.member("cancel_reason", cancelReason)
        writer.member("customer_ref", customerRef)
        writer.member("delay_reason", delayReason)
        writer.member("display_name", displayName)
        writer.member("eta", WireCoding.rfc3339(eta))
        if let events {
            writer.key("events")
            writer.json(try WireCoding.encoder.encode(events))
        }
        writer.member("id", lowercased: id)
        writer.key("items")
        writer.beginArray()
        for item in items { item.encode(to: &writer) }
        writer.endArray()
        writer.member("locale", locale)
        writer.key("number")
        writer.number(number)
        writer.member("pickup_point", pickupPoint)
        writer.member("placed_at", WireCoding.rfc3339(placedAt))
        writer.member("pos_ref", posRef)
        if let projection {
            writer.key("projection")
            if let projection {
                writer.json(try WireCoding.encoder.encode(projection))
            } else {
                writer.null()
            }
        }
        writer.member("state", state.rawValue)
        writer.member("store_id", storeID)
        writer.member("updated_at", WireCoding.rfc3339(updatedAt))
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
        writer.member("name", name)
        writer.key("quantity")
        writer.number(quantity)
        writer.member("size", size)
        writer.endObject()
    }
}
