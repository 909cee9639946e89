/// Why a store's broadcast channel could not be enabled, read, or used: each case a stable `code`, so a POS can tell
/// "turn the capability on at Apple" from "try again" from "you have too many channels".
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

    public var statusCode: Int {
        switch self {
        case .notEnabled: 404
        // "Not configured here" is a conflict with this deployment, as `master_key_not_configured` is, not an outage.
        case .storageConflict, .channelMismatch, .channelLimit, .unavailable: 409
        case .bundleRequired: 422
        case .apnsRefused: 502
        case .apnsUnavailable: 503
        }
    }

    public var message: String {
        switch self {
        case .notEnabled: "This store's board is not on a broadcast channel; enable it with PUT /v1/stores/{store}/broadcast."
        case .storageConflict(let current):
            "This store's channel stores '\(current)'; APNs cannot change a channel's storage: DELETE the broadcast, then PUT it again."
        case .channelMismatch(let field, let current):
            "This store's channel has \(field) '\(current)'; a channel cannot move: DELETE the broadcast, then PUT it again."
        case .unavailable: "This Crema process sends no pushes, so it cannot manage broadcast channels; ask the one that does."
        case .bundleRequired(let apps): "This tenant has several apps (\(apps.joined(separator: ", "))): name one in 'bundle_id'."
        case .channelLimit: "APNs allows 10,000 channels per app and environment, and they are in use (CannotCreateChannelConfig); see docs/broadcast.md."
        case .apnsRefused(let status, let reason): "APNs refused the channel request (\(status) \(reason))."
        case .apnsUnavailable(let why): "APNs could not be reached or asked to wait (\(why)); try again."
        }
    }
}
