import CremaAPNsProtocol
import Foundation

extension OrderEventRequest {
    /// The request as `WireCoding.canonical` writes it, byte for byte, without `JSONEncoder`: idempotency stores and
    /// compares it for every event. Keys in code-point order, absent optionals left out.
    public func canonicalJSON() -> String {
        var writer = JSONWriter(escapingSlashes: false, capacity: 128)
        writer.beginObject()
        if let barista {
            writer.key("barista")
            writer.string(barista)
        }
        if let eta {
            writer.key("eta")
            writer.string(WireCoding.rfc3339(eta))
        }
        if let expectedVersion {
            writer.key("expected_version")
            writer.number(expectedVersion)
        }
        if let pickupPoint {
            writer.key("pickup_point")
            writer.string(pickupPoint)
        }
        if let reason {
            writer.key("reason")
            writer.string(reason)
        }
        writer.key("type")
        writer.string(type)
        writer.endObject()
        return writer.text
    }
}
