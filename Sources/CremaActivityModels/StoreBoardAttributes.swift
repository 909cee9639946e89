/// The static half of a store's pickup board, the Live Activity every waiting customer can follow at once on the
/// store's APNs broadcast channel (docs/broadcast.md).
///
/// One channel carries one board to many devices, so nothing in it is personal: order numbers, not names. The app
/// starts it with `Activity.request(attributes:content:pushType: .channel(channelID))`, or a push-to-start whose
/// `input-push-channel` names the channel; the push's `attributes-type` is `"StoreBoardAttributes"`: do not rename it.
public struct StoreBoardAttributes: Codable, Hashable, Sendable {
    /// The store (`store_id` in the API).
    public var storeID: String
    /// The store's display name, as the store set it ("Market St").
    public var storeName: String

    public init(storeID: String, storeName: String) {
        self.storeID = storeID
        self.storeName = storeName
    }
}
