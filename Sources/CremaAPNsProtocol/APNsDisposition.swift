public import Foundation

/// The one thing a sender does with an APNs answer, from docs/apns.md §3: the dispatcher acts on this,
/// never on raw status codes, so every fault is handled the same way everywhere.
public enum APNsDisposition: Sendable, Hashable {
    /// 200: done.
    case delivered
    /// Transient (429 `TooManyRequests`, 5xx, `IdleTimeout`, `Shutdown`, transport failures): try again later,
    /// no sooner than `after` when the server said so.
    case retry(after: TimeInterval?)
    /// 403 `ExpiredProviderToken`: sign a new JWT and try again at once.
    case refreshProviderToken
    /// 403 `InvalidProviderToken`: APNs refuses the key itself (wrong Key ID, Team ID or key, or revoked at Apple).
    /// A configuration mistake: the key is marked rejected and the push waits for a key APNs accepts.
    case signingKeyRejected
    /// The token is gone for this topic (410 `Unregistered`/`ExpiredToken`, 400 `BadDeviceToken`,
    /// `DeviceTokenNotForTopic`): retire it, unless it was registered again after `since`.
    case retireToken(since: Date?)
    /// Can never succeed as sent (a malformed request, a configuration error, `PayloadTooLarge`, `Forbidden`):
    /// stop and keep the reason.
    case deadLetter

    /// Transport-level failures (no answer at all) are retried like a 503.
    public static let transportFailure = APNsDisposition.retry(after: nil)

    init(classifying response: APNsResponse) {
        switch (response.status, response.reason) {
        case (200..<300, _):
            self = .delivered
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            self = .retireToken(since: response.timestamp)
        case (403, "ExpiredProviderToken"):
            self = .refreshProviderToken
        case (403, "InvalidProviderToken"):
            self = .signingKeyRejected
        case (429, "TooManyProviderTokenUpdates"):
            // The connection refuses new tokens for a while; the JWT cache must not rotate, only wait.
            self = .retry(after: response.retryAfter ?? 60)
        case (429, _), (500..<600, _), (400, "IdleTimeout"):
            self = .retry(after: response.retryAfter)
        default:
            self = .deadLetter
        }
    }
}
