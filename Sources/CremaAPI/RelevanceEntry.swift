public import CremaCore
public import Foundation

/// One open order: from its placement to the end of its pickup window (`RelevanceInterval.of`), and its store's place,
/// null while the store has none.
public struct RelevanceEntry: Codable, Sendable, Hashable {
    /// Lowercase, as every id in the API.
    public var orderID: String
    public var storeID: String
    public var start: Date
    public var end: Date
    public var location: StoreLocation?

    enum CodingKeys: String, CodingKey {
        case start, end, location
        case orderID = "order_id", storeID = "store_id"
    }

    public init(orderID: UUID, storeID: String, interval: RelevanceInterval, location: StoreLocation?) {
        self.orderID = orderID.uuidString.lowercased()
        self.storeID = storeID
        start = interval.start
        end = interval.end
        self.location = location
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(orderID, forKey: .orderID)
        try c.encode(storeID, forKey: .storeID)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(location, forKey: .location)
    }
}
