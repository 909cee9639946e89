import CremaAPNsProtocol
import CremaCivilTime
import CremaCore
public import Foundation

/// The bodies of the webhooks an order command writes (docs/webhooks.md): `{"created_at","data","id","type"}` in
/// the encoder's sorted key order. Written here because they are stored with the command, in its transaction, and
/// receivers verify signatures over these exact bytes; `OrderWebhookBodyTests` holds them to what CremaAPI's
/// `WebhookEnvelope` encodes to.
public enum OrderWebhookBody {
    /// `order.changed` around `answer`, the command's answer as stored (`OrderAnswer`): the order is not written a
    /// second time, which was 7 % of crema's CPU per event under ingest.
    public static func orderChanged(id: UUID, createdAt: Date, answer: String) -> String {
        let id = id.uuidString.lowercased()
        let type = WebhookEventType.orderChanged.rawValue
        return #"{"created_at":"\#(RFC3339.text(createdAt))","data":{"order":\#(answer)},"id":"\#(id)","type":"\#(type)"}"#
    }

    /// `activity.ended`: the order reached its end (its final `state`), by the event `endedBy`, at `endedAt`.
    public static func activityEnded(
        id: UUID, createdAt: Date, orderID: UUID, storeID: String, state: String, endedBy: String, endedAt: Date
    ) -> String {
        var writer = JSONWriter(escapingSlashes: false, capacity: 320)
        writer.beginObject()
        writer.member("created_at", RFC3339.text(createdAt))
        writer.key("data")
        writer.beginObject()
        writer.key("activity")
        writer.beginObject()
        writer.member("ended_at", RFC3339.text(endedAt))
        writer.member("ended_by", endedBy)
        writer.member("order_id", lowercased: orderID)
        writer.member("state", state)
        writer.member("store_id", storeID)
        writer.endObject()
        writer.endObject()
        writer.member("id", lowercased: id)
        writer.member("type", WebhookEventType.activityEnded.rawValue)
        writer.endObject()
        return writer.text
    }
}
