import CremaAPNsProtocol
import CremaActivityModels

extension OrderActivityIdentity {
    /// As `JSONEncoder` with `.sortedKeys` writes it under its snake-case `CodingKeys`, written directly for every Live
    /// Activity body's `crema` key (`OrderLiveActivityBody.encode(to:)`): keys in code-point order.
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("number")
        writer.number(number)
        writer.member("order_id", orderID)
        writer.member("receipt", ifPresent: receipt)
        writer.member("store_id", storeID)
        writer.endObject()
    }
}
