/// Why a store's broadcast channel could not be enabled, read, or used: each case a stable `code`, so a POS can tell
/// "turn the capability on at Apple" from "try again" from "you have too many channels". Here, below both the
/// application layer (which refuses) and the wire module (which gives each case its HTTP status and message in
/// `BroadcastRefusal+HTTP.swift`), so that the service needs no wire type to say why.
public enum BroadcastRefusal: Error, Sendable, Hashable {
    /// The store has no board on a channel (`PUT /v1/stores/{store}/broadcast` first).
    case notEnabled
    /// The store's channel stores messages differently; Apple cannot change a channel's policy: disable, then enable.
    case storageConflict(current: String)
    /// The store's channel belongs to another app or APNs environment than the request names: disable, then enable.
    case channelMismatch(field: String, current: String)
    /// This process sends no pushes (no APNs configured), so it cannot manage channels.
    case unavailable
    /// The tenant has several apps: the request must name the one whose channel this is.
    case bundleRequired([String])
    /// Apple's 10,000 channels per app and environment are used up (`CannotCreateChannelConfig`).
    case channelLimit
    /// APNs refused the channel request for a reason retrying will not fix (`FeatureNotEnabled`: the app's
    /// Broadcast Capability is off; a bad key).
    case apnsRefused(status: Int, reason: String)
    /// APNs gave no answer (timeout, connection failure) or asked to wait: the same request later may succeed.
    case apnsUnavailable(String)

    public var code: String {
        switch self {
        case .notEnabled: "broadcast_not_enabled"
        case .storageConflict: "broadcast_storage_conflict"
        case .channelMismatch: "broadcast_channel_mismatch"
        case .unavailable: "broadcast_unavailable"
        case .bundleRequired: "bundle_required"
        case .channelLimit: "channel_limit_reached"
        case .apnsRefused: "apns_refused"
        case .apnsUnavailable: "apns_unavailable"
        }
    }
}
