/// Why Crema closed an order by itself; the raw values are the `reason` of an `expired` event, codes that
/// reports can count (never free text, so they are not personal data and survive erasure).
public enum ExpiryReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Ready, and nobody came for it within the store's `ready_expiry_minutes`.
    case notCollected = "not_collected"
    /// Still queued (nobody started making it) after the store's `queued_expiry_minutes`.
    case neverStarted = "never_started"

    /// The one state this reason can end: an order that moved on no longer has this reason to expire.
    public var expiredState: OrderState {
        switch self {
        case .notCollected: .ready
        case .neverStarted: .queued
        }
    }
}
