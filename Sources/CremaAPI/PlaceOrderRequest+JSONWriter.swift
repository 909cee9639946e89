import CremaAPNsProtocol
import Foundation

extension PlaceOrderRequest {
    /// The request as `WireCoding.canonical` writes it, byte for byte, without `JSONEncoder`: idempotency stores and
    /// compares it for every placement. Keys in code-point order, absent optionals left out (the synthesized
    /// `encodeIfPresent`); `OrderRequestJSONWriterTests` holds the bytes to the encoder's.
    public func canonicalJSON() -> String {
        var writer = JSONWriter(escapingSlashes: false, capacity: 512)
        writer.beginObject()
        writer.member("customer_ref", ifPresent: customerRef)
        writer.member("display_name", displayName)
        writer.member("eta", WireCoding.rfc3339(eta))
        writer.key("items")
        writer.beginArray()
        for item in items { item.encode(to: &writer) }
        writer.endArray()
        writer.member("locale", locale)
        writer.member("pos_ref", posRef)
        writer.member("store_id", storeID)
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
        writer.member("name", name)
        if let quantity {
            writer.key("quantity")
            writer.number(quantity)
        }
        writer.member("size", ifPresent: size)
        writer.endObject()
    }
}
