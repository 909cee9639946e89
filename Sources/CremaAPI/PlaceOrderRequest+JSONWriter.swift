import CremaAPNsProtocol
import Foundation

extension PlaceOrderRequest {
    /// The request as `WireCoding.canonical` writes it, byte for byte, without `JSONEncoder`: idempotency stores and
    /// compares it for every placement. Keys in code-point order, absent optionals left out (the synthesized
    /// `encodeIfPresent`); `OrderRequestJSONWriterTests` holds the bytes to the encoder's.
    public func canonicalJSON() -> String {
        var writer = JSONWriter(escapingSlashes: false, capacity: 512)
        writer.beginObject()
        if let customerRef {
            writer.key("customer_ref")
            writer.string(customerRef)
        }
        writer.key("display_name")
        writer.string(displayName)
        writer.key("eta")
        writer.string(WireCoding.rfc3339(eta))
        writer.key("items")
        writer.beginArray()
        for item in items { item.encode(to: &writer) }
        writer.endArray()
        writer.key("locale")
        writer.string(locale)
        writer.key("pos_ref")
        writer.string(posRef)
        writer.key("store_id")
        writer.string(storeID)
        writer.endObject()
        return writer.text
    }
}

extension ItemRequest {
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        if let modifiers {
            writer.key("modifiers")
            writer.beginArray()
            for modifier in modifiers { writer.string(modifier) }
            writer.endArray()
        }
        writer.key("name")
        writer.string(name)
        if let quantity {
            writer.key("quantity")
            writer.number(quantity)
        }
        if let size {
            writer.key("size")
            writer.string(size)
        }
        writer.endObject()
    }
}
