import CremaAPNsProtocol
import Foundation

extension OrderEventRequest {
    /// The request as `WireCoding.canonical` writes it, byte for byte, without `JSONEncoder`: idempotency stores and
    /// compares it for every event. Keys in code-point order, absent optionals left out.
    public func canonicalJSON() -> String {
        var writer = JSONWriter(escapingSlashes: false, capacity: 128)
        writer.beginObject()
        writer.member("barista", ifPresent: barista)
        writer.member("eta", ifPresent: eta.map(WireCoding.rfc3339))
        if let expectedVersion {
            writer.key("expected_version")
            writer.number(expectedVersion)
        }
        writer.member("pickup_point", ifPresent: pickupPoint)
        writer.member("reason", ifPresent: reason)
        writer.member("type", type)
        writer.endObject()
        return writer.text
    }
}
