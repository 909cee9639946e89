import CremaAPNsProtocol
import CremaActivityModels

/// An alert notification as Crema sends it about an order: the `aps` dictionary iOS reads, and beside it `crema`, the
/// order's identity and the push's receipt, which the app's Notification Service Extension reads (`mutable-content`
/// lets it run) to post the receipt back.
struct OrderAlertBody: Encodable {
    var aps: APNsPayload.Notification.APS
    /// Left out (not `null`) when absent.
    var crema: OrderActivityIdentity?

    /// The body as `APNsPayload.encode` writes it, written directly; `APNsBodyJSONWriterTests` holds the bytes to the
    /// encoder's.
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("aps")
        aps.encode(to: &writer)
        if let crema {
            writer.key("crema")
            crema.encode(to: &writer)
        }
        writer.endObject()
    }
}
