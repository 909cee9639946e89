public import Foundation

/// A coffee shop: orders belong to one, numbers are counted per store, boards show one.
public struct Store: Sendable, Hashable {
    public var id: String
    public var name: String
    public var timezone: String
    public var createdAt: Date
    public var updatedAt: Date
    /// How long its orders may wait in `ready` or `queued` before Crema closes them.
    public var expiryLimits: ExpiryLimits
    /// Where it is, when the POS said (`PUT /v1/stores/{store}` with `location`); the watch's relevance clue.
    public var location: StoreLocation?

    public init(
        id: String, name: String, timezone: String, createdAt: Date, updatedAt: Date, expiryLimits: ExpiryLimits = .standard,
        location: StoreLocation? = nil
    ) {
        self.expiryLimits = expiryLimits
        self.location = location
        self.id = id
        self.name = name
        self.timezone = timezone
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
