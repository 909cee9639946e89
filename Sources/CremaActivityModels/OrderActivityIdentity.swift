/// Which order a Live Activity push is about, sent next to `aps` as `"crema":{"order_id":…,"store_id":…,"number":…}`
/// in every Live Activity push, so an app woken by a push-to-start can register the new activity's update token.
///
/// APNs ignores custom keys inside `aps`, hence a key of its own. The app reads it from the notification's
/// `userInfo["crema"]`, or from the attributes of an activity it finds running (`OrderActivityAttributes.identity`).
public struct OrderActivityIdentity: Codable, Hashable, Sendable {
    /// The order's id as Crema's API writes it: a lowercase UUID.
    public var orderID: String
    /// The store the order belongs to.
    public var storeID: String
    /// The number on the cup.
    public var number: Int
    /// The receipt naming the one delivery that carried this key (absent in the attributes' copy): the app's
    /// Notification Service Extension, or its code handling the push, posts it to `POST /v1/me/receipts`.
    public var receipt: String?

    public init(orderID: String, storeID: String, number: Int, receipt: String? = nil) {
        self.orderID = orderID
        self.storeID = storeID
        self.number = number
        self.receipt = receipt
    }

    /// The wire names follow Crema's API (snake case), not Swift's: they are read by the app's own code, not by
    /// ActivityKit's decoder.
    enum CodingKeys: String, CodingKey {
        case orderID = "order_id"
        case storeID = "store_id"
        case number
        case receipt
    }
}
