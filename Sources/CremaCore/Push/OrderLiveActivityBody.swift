import CremaAPNsProtocol
import CremaActivityModels

/// A Live Activity push as Crema sends it: the `aps` dictionary ActivityKit reads, and next to it `crema`, the
/// order's identity, which the app's own code reads (APNs ignores custom keys inside `aps`).
struct OrderLiveActivityBody: Encodable {
    var aps: APNsBodyBuilder.LiveActivityPayload.APS
    /// Left out (not `null`) when absent.
    var crema: OrderActivityIdentity?

    /// The body as `APNsPayload.encode` writes it, written directly: it is written at least once per push (more while
    /// fitting), and the encoder's generic containers cost more than the rest of the plan's text work. Keys in the
    /// encoder's code-point order, `aps` in that of `APNsPayload.LiveActivity.APS.CodingKeys`, absent optionals left
    /// out; `APNsBodyJSONWriterTests` holds the bytes to the encoder's.
    func encode(to writer: inout JSONWriter) throws(JSONWriterError) {
        writer.beginObject()
        writer.key("aps")
        writer.beginObject()
        if let alert = aps.alert {
            writer.key("alert")
            alert.encode(to: &writer)
        }
        if let attributes = aps.attributes {
            writer.key("attributes")
            attributes.encode(to: &writer)
        }
        writer.member("attributes-type", ifPresent: aps.attributesType)
        writer.key("content-state")
        try aps.contentState.encode(to: &writer)
        if let dismissalDate = aps.dismissalDate {
            writer.key("dismissal-date")
            writer.number(dismissalDate)
        }
        writer.member("event", aps.event.rawValue)
        writer.member("input-push-channel", ifPresent: aps.inputPushChannel)
        if let inputPushToken = aps.inputPushToken {
            writer.key("input-push-token")
            writer.number(inputPushToken)
        }
        if let relevanceScore = aps.relevanceScore {
            writer.key("relevance-score")
            try writer.number(relevanceScore)
        }
        if let staleDate = aps.staleDate {
            writer.key("stale-date")
            writer.number(staleDate)
        }
        writer.key("timestamp")
        writer.number(aps.timestamp)
        writer.endObject()
        if let crema {
            writer.key("crema")
            crema.encode(to: &writer)
        }
        writer.endObject()
    }
}
