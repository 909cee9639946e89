/// `PUT /v1/stores/{store}/broadcast`: how the channel stores messages, and (optionally) whose app and which APNs
/// environment it belongs to.
public struct BroadcastPutRequest: Codable, Sendable, Hashable {
    /// `none` (No Message Stored: a device that was offline sees the next one) or `latest` (Most Recent Message Stored).
    public var storage: String
    /// The app the channel belongs to; may be left out when the tenant has one app.
    public var bundleID: String?
    /// `sandbox` or `production` (the default).
    public var environment: String?

    enum CodingKeys: String, CodingKey {
        case storage, environment
        case bundleID = "bundle_id"
    }

    public init(storage: String, bundleID: String? = nil, environment: String? = nil) {
        self.storage = storage
        self.bundleID = bundleID
        self.environment = environment
    }
}

/// `POST /v1/stores/{store}/announcements`: a line on the store's board until `until` (RFC 3339).
public struct AnnouncementRequest: Codable, Sendable, Hashable {
    public var message: String
    public var until: String

    public init(message: String, until: String) {
        self.message = message
        self.until = until
    }
}

/// `PUT /v1/me/stores/{store}/broadcast/start-token`: the push-to-start token of the app's `StoreBoardAttributes`
/// activities (`Activity<StoreBoardAttributes>.pushToStartToken`), registered for one store: the customer's consent
/// to have the store's board started on this device when they order there.
public struct BoardStartTokenRequest: Codable, Sendable, Hashable {
    public var token: String
    /// `sandbox` or `production` (the default).
    public var environment: String?

    public init(token: String, environment: String? = nil) {
        self.token = token
        self.environment = environment
    }
}
