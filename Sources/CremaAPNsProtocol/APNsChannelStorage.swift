/// What APNs keeps of a broadcast channel's messages for devices that were offline: chosen once when the channel is
/// created (it cannot change), and it decides which `apns-expiration` a broadcast may carry (docs/apns.md §5.6).
public enum APNsChannelStorage: String, Sendable, Codable, CaseIterable {
    /// "No Message Stored": each broadcast is tried once; a higher publishing budget, for frequent updates.
    case none
    /// "Most Recent Message Stored": the last broadcast is kept (at most 8 hours) for devices that come back.
    case latest

    /// The `message-storage-policy` number of APNs' channel-management body.
    public var messageStoragePolicy: Int {
        switch self {
        case .none: 0
        case .latest: 1
        }
    }

    /// The storage of a `message-storage-policy` number; nil for a number APNs does not define.
    public init?(messageStoragePolicy: Int) {
        switch messageStoragePolicy {
        case 0: self = .none
        case 1: self = .latest
        default: return nil
        }
    }
}
