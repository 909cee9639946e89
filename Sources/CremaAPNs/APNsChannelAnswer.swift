public import CremaAPNsProtocol
public import Foundation

/// What APNs' channel-management API answered to one call: each route fills what it returns (create: the new
/// `channelID`; read: `channelID` and `storage`; list: `channelIDs`), and a refusal its `reason`.
public struct APNsChannelAnswer: Sendable, Hashable {
    /// 201 created, 200 read or listed, 204 deleted; anything else is a refusal.
    public var status: Int
    /// Create: the `apns-channel-id` header of the new channel. Read and delete: the channel asked about.
    public var channelID: String?
    /// Read: the channel's `message-storage-policy`.
    public var storage: APNsChannelStorage?
    /// List: every channel of the app in that environment (`{"channels":[…]}`); empty for the other routes.
    public var channelIDs: [String]
    /// Apple's reason for a refusal (`ChannelNotRegistered`, `CannotCreateChannelConfig`, …); nil on success.
    public var reason: String?
    /// The `Retry-After` header in seconds, when the server sent one.
    public var retryAfter: TimeInterval?
    /// The `apns-request-id` the server echoed.
    public var requestID: UUID?

    public init(
        status: Int, channelID: String? = nil, storage: APNsChannelStorage? = nil, channelIDs: [String] = [],
        reason: String? = nil, retryAfter: TimeInterval? = nil, requestID: UUID? = nil
    ) {
        self.status = status
        self.channelID = channelID
        self.storage = storage
        self.channelIDs = channelIDs
        self.reason = reason
        self.retryAfter = retryAfter
        self.requestID = requestID
    }

    /// What the caller must do about this answer.
    public var disposition: APNsBroadcastDisposition {
        APNsBroadcastDisposition(status: status, reason: reason, retryAfter: retryAfter)
    }
}
