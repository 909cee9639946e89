import CremaAPNsProtocol
import CremaCivilTime
public import CremaCore
import Foundation

/// The order as every order command answers it: the document `GET /v1/orders/{id}` shows without its history
/// (`Order` in /openapi.yaml). Written here, not by the wire module, because the answer is stored with the
/// Idempotency-Key inside the command's transaction and replayed byte for byte: the service owns what it stores.
/// Written directly, in the encoder's sorted (code-point) key order with every key present, because the encoder's
/// boxing was most of an answer's cost (docs/benchmarks.md); `OrderAnswerTests` holds the bytes to what CremaAPI's
/// `OrderResponse` encodes to.
public enum OrderAnswer {
    public static func json(_ order: Order) -> String {
        var writer = JSONWriter(escapingSlashes: false)
        writer.beginObject()
        writer.key("allowed_events")
        writer.beginArray()
        for event in order.allowedEvents { writer.string(event.rawValue) }
        writer.endArray()
        writer.member("barista", order.barista)
        writer.member("cancel_reason", order.cancelReason)
        writer.member("customer_ref", order.customerRef)
        writer.member("delay_reason", order.delayReason)
        writer.member("display_name", order.displayName)
        writer.member("eta", RFC3339.text(order.eta))
        writer.member("id", lowercased: order.id)
        writer.key("items")
        writer.beginArray()
        for item in order.items {
            writer.beginObject()
            writer.key("modifiers")
            writer.beginArray()
            for modifier in item.modifiers { writer.string(modifier) }
            writer.endArray()
            writer.member("name", item.name)
            writer.key("quantity")
            writer.number(item.quantity)
            writer.member("size", item.size)
            writer.endObject()
        }
        writer.endArray()
        writer.member("locale", order.locale)
        writer.key("number")
        writer.number(order.number)
        writer.member("pickup_point", order.pickupPoint)
        writer.member("placed_at", RFC3339.text(order.placedAt))
        writer.member("pos_ref", order.posRef)
        writer.member("state", order.state.rawValue)
        writer.member("store_id", order.storeID)
        writer.member("updated_at", RFC3339.text(order.updatedAt))
        writer.key("version")
        writer.number(order.version)
        writer.endObject()
        return writer.text
    }
}
