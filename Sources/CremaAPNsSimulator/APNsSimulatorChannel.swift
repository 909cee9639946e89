public import CremaAPNsProtocol
public import Foundation

/// One broadcast channel the simulator keeps, as `GET /sim/channels` lists it: what a test reads to prove a
/// channel was created, kept or deleted at "APNs".
public struct APNsSimulatorChannel: Sendable, Codable, Hashable {
    /// The base64 id the simulator returned in `apns-channel-id` (16 random bytes).
    public var id: String
    /// The app whose path created it; broadcasts to it must use this app's path.
    public var bundleID: String
    /// Its `message-storage-policy`, which decides the `apns-expiration` its broadcasts may carry.
    public var storage: APNsChannelStorage
    /// When it was created, by the simulator's clock.
    public var createdAt: Date

    public init(id: String, bundleID: String, storage: APNsChannelStorage, createdAt: Date) {
        self.id = id
        self.bundleID = bundleID
        self.storage = storage
        self.createdAt = createdAt
    }
}
