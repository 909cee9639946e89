public import Foundation

/// A store's broadcast channel as Crema keeps it: Apple's id, the app and environment it belongs to, how it stores
/// messages, and what the last broadcast on it got.
public struct StoreChannelRecord: Sendable, Hashable {
    public var tenantID: String
    public var storeID: String
    public var bundleID: String
    /// `sandbox` or `production`, as channels are environment-specific at Apple.
    public var environment: String
    /// `none` (No Message Stored) or `latest` (Most Recent Message Stored).
    public var storage: String
    public var channelID: String
    public var createdAt: Date
    /// When Apple last turned out to have forgotten the channel and Crema made a new one; nil: never.
    public var recreatedAt: Date?
    public var recreations: Int
    public var lastBroadcastAt: Date?
    public var lastStatus: Int?
    public var lastReason: String?
    public var broadcasts: Int64

    public init(
        tenantID: String, storeID: String, bundleID: String, environment: String, storage: String, channelID: String, createdAt: Date,
        recreatedAt: Date? = nil, recreations: Int = 0, lastBroadcastAt: Date? = nil, lastStatus: Int? = nil, lastReason: String? = nil,
        broadcasts: Int64 = 0
    ) {
        self.tenantID = tenantID
        self.storeID = storeID
        self.bundleID = bundleID
        self.environment = environment
        self.storage = storage
        self.channelID = channelID
        self.createdAt = createdAt
        self.recreatedAt = recreatedAt
        self.recreations = recreations
        self.lastBroadcastAt = lastBroadcastAt
        self.lastStatus = lastStatus
        self.lastReason = lastReason
        self.broadcasts = broadcasts
    }
}
