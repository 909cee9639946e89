public import CremaCore

/// What a store's board is projected from, read in one round trip: the store's name, its open orders (at most
/// `OrderRepository.boardLimit`) and its running announcements.
public struct BoardInputs: Sendable, Hashable {
    public var storeName: String
    public var orders: [BoardOrder]
    public var announcements: [StoreAnnouncement]

    public init(storeName: String, orders: [BoardOrder], announcements: [StoreAnnouncement]) {
        self.storeName = storeName
        self.orders = orders
        self.announcements = announcements
    }
}
