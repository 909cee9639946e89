public import CremaAPNsProtocol

/// `GET`/`PUT /v1/stores/{store}/broadcast`: the store's channel, and the board as the last broadcast carries it.
public struct BroadcastResponse: Codable, Sendable, Hashable {
    public var storeID: String
    public var channelID: String
    public var bundleID: String
    public var environment: String
    public var storage: String
    /// `active`; `recreated` when APNs forgot the channel and Crema made a new one (subscribers must fetch the new id).
    public var state: String
    public var createdAt: String
    public var recreations: Int
    public var lastBroadcastAt: String?
    public var lastStatus: Int?
    public var lastReason: String?
    public var broadcasts: Int64
    /// The board now, as a broadcast's `content-state` carries it to devices.
    public var contentState: JSONValue

    enum CodingKeys: String, CodingKey {
        case storeID = "store_id", channelID = "channel_id", bundleID = "bundle_id", environment, storage, state
        case createdAt = "created_at", recreations, lastBroadcastAt = "last_broadcast_at", lastStatus = "last_status"
        case lastReason = "last_reason", broadcasts, contentState = "content_state"
    }

    public init(
        storeID: String, channelID: String, bundleID: String, environment: String, storage: String, state: String, createdAt: String,
        recreations: Int, lastBroadcastAt: String?, lastStatus: Int?, lastReason: String?, broadcasts: Int64, contentState: JSONValue
    ) {
        self.storeID = storeID
        self.channelID = channelID
        self.bundleID = bundleID
        self.environment = environment
        self.storage = storage
        self.state = state
        self.createdAt = createdAt
        self.recreations = recreations
        self.lastBroadcastAt = lastBroadcastAt
        self.lastStatus = lastStatus
        self.lastReason = lastReason
        self.broadcasts = broadcasts
        self.contentState = contentState
    }
}

/// `GET /v1/me/stores/{store}/broadcast`: what a customer's app needs to follow the store's board: the channel to
/// subscribe to, and the attributes and state to start the activity with.
public struct CustomerBroadcastResponse: Codable, Sendable, Hashable {
    public var channelID: String
    public var environment: String
    public var attributes: JSONValue
    public var contentState: JSONValue

    enum CodingKeys: String, CodingKey {
        case channelID = "channel_id", environment, attributes, contentState = "content_state"
    }

    public init(channelID: String, environment: String, attributes: JSONValue, contentState: JSONValue) {
        self.channelID = channelID
        self.environment = environment
        self.attributes = attributes
        self.contentState = contentState
    }
}

/// `POST /v1/stores/{store}/announcements` → 201.
public struct AnnouncementResponse: Codable, Sendable, Hashable {
    public var storeID: String
    public var message: String
    public var until: String
    public var createdAt: String

    enum CodingKeys: String, CodingKey {
        case storeID = "store_id", message, until, createdAt = "created_at"
    }

    public init(storeID: String, message: String, until: String, createdAt: String) {
        self.storeID = storeID
        self.message = message
        self.until = until
        self.createdAt = createdAt
    }
}
