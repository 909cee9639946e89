import CremaAPNsProtocol
import CremaActivityModels

extension OrderActivityAttributes {
    /// As `JSONEncoder` with `.sortedKeys` writes it, written directly for the push-to-start body
    /// (`OrderLiveActivityBody.encode(to:)`): keys in code-point order.
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("customerName", customerName)
        writer.member("itemsSummary", itemsSummary)
        writer.member("orderID", orderID)
        writer.key("orderNumber")
        writer.number(orderNumber)
        writer.member("storeID", storeID)
        writer.member("storeName", storeName)
        writer.endObject()
    }
}
