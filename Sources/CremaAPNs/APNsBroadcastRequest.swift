public import CremaAPNsProtocol
public import Foundation

/// One broadcast as APNs receives it: one Live Activity update or end for every device subscribed to a channel
/// (docs/apns.md §5.6). The outbox builds these; ``APNsClient`` sends them unchanged.
public struct APNsBroadcastRequest: Sendable, Hashable {
    /// The channel's id as APNs returned it (base64); it goes in `apns-channel-id`.
    public var channelID: String
    /// The environment the channel was created in; it picks the base URL.
    public var environment: APNsEnvironment
    /// The app the channel belongs to; it is the `:path` (`/4/broadcasts/apps/<bundleID>`), with no suffix.
    public var bundleID: String
    /// `apns-priority`: 10, 5 or 1 (APNs requires the header on broadcasts).
    public var priority: Int
    /// `apns-expiration` as Unix seconds; nil sends `0` ("try once, store nothing"), the only value a channel
    /// with ``APNsChannelStorage/none`` accepts.
    public var expiration: Date?
    /// `apns-request-id`, sent in lowercase; APNs echoes it back.
    public var requestID: UUID
    /// The JSON body (an `aps` with event `update` or `end`), at most ``APNsBody/broadcastBodyLimit`` bytes.
    public var body: Data

    public init(
        channelID: String,
        environment: APNsEnvironment,
        bundleID: String,
        priority: Int,
        expiration: Date? = nil,
        requestID: UUID,
        body: Data
    ) {
        self.channelID = channelID
        self.environment = environment
        self.bundleID = bundleID
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.body = body
    }
}
