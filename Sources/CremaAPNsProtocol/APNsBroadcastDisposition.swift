public import Foundation

/// The one thing a sender does with APNs' answer to a broadcast or a channel-management call (docs/apns.md §5.6). Broadcast errors concern a channel, not a device, so they need their own
/// classes: a channel that is gone is re-created, not retired like a token, and a configuration error stops every
/// broadcast of the app until someone fixes it.
public enum APNsBroadcastDisposition: Sendable, Hashable {
    /// 2xx: sent, created, read, listed or deleted.
    case accepted
    /// The channel no longer exists at APNs (`ChannelNotRegistered`, `BadChannelId`, 410): stop using it, and
    /// create a new one if the board is still wanted.
    case channelGone
    /// Transient (429 `TooManyRequests`, `TooManyProviderTokenUpdates`, 5xx, `IdleTimeout`, `Shutdown`, an
    /// `ExpiredProviderToken` that survived the client's own retry): try again, no sooner than `after` when known.
    case retryLater(after: TimeInterval?)
    /// The request or the app's setup is wrong and sending it again will not help (`FeatureNotEnabled`,
    /// `MissingChannelId`, `BadExpirationDate`, `InvalidPushType`, `MissingPushType`, `TopicDisallowed`,
    /// `BadPriority`, `BadRequestPayload`, `PayloadEmpty`, `PayloadTooLarge`, `InvalidProviderToken`, and any
    /// other 4xx): stop and keep the reason.
    case configurationError
    /// 400 `CannotCreateChannelConfig`: the app already has APNs' maximum of channels in this environment
    /// (10,000); delete some before creating more.
    case channelLimit

    /// A stable machine-readable code for logs, metrics and API errors.
    public var code: String {
        switch self {
        case .accepted: "apns_accepted"
        case .channelGone: "apns_channel_gone"
        case .retryLater: "apns_retry_later"
        case .configurationError: "apns_configuration_error"
        case .channelLimit: "apns_channel_limit"
        }
    }

    /// Classifies a status, Apple's reason and the `Retry-After` seconds.
    public init(status: Int, reason: String?, retryAfter: TimeInterval?) {
        switch (status, reason) {
        case (200..<300, _):
            self = .accepted
        case (410, _), (400, "ChannelNotRegistered"), (400, "BadChannelId"):
            self = .channelGone
        case (400, "CannotCreateChannelConfig"):
            self = .channelLimit
        case (429, "TooManyProviderTokenUpdates"):
            // The connection refuses new tokens for a while: wait, do not rotate.
            self = .retryLater(after: retryAfter ?? 60)
        case (429, _), (500..<600, _), (400, "IdleTimeout"), (403, "ExpiredProviderToken"):
            self = .retryLater(after: retryAfter)
        default:
            self = .configurationError
        }
    }
}

extension APNsResponse {
    /// What a broadcast sender must do about this answer (a device push uses ``disposition`` instead).
    public var broadcastDisposition: APNsBroadcastDisposition {
        APNsBroadcastDisposition(status: status, reason: reason, retryAfter: retryAfter)
    }
}
