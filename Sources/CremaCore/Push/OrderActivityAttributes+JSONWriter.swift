import CremaAPNsProtocol
import CremaActivityModels

extension OrderActivityAttributes {
    /// As `JSONEncoder` with `.sortedKeys` writes it, written directly for the push-to-start body
    /// (`OrderLiveActivityBody.encode(to:)`): keys in code-point order.
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("customerName")
        writer.string(customerName)
        writer.key("itemsSummary")
        writer.string(itemsSummary)
        writer.key("orderID")
        writer.string(orderID)
        writer.key("orderNumber")
        writer.number(orderNumber)
        writer.key("storeID")
        writer.string(storeID)
        writer.key("storeName")
        writer.string(storeName)
        writer.endObject()
    }
}
