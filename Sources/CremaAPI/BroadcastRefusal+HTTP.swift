public import CremaCore

/// How the API answers each broadcast refusal: its HTTP status and message (the case and its code are the core's).
extension BroadcastRefusal {
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
