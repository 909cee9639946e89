public import CremaAPNsProtocol
public import Foundation

/// One push as APNs receives it: the device token, where it goes, and the headers and body Apple defines
/// (docs/apns.md §1.2). The dispatcher builds these; ``APNsClient`` sends them unchanged.
public struct APNsRequest: Sendable, Hashable {
    /// The device token in lowercase hex (it becomes the `:path`).
    public var deviceToken: String
    /// Which APNs environment issued the token; it picks the base URL.
    public var environment: APNsEnvironment
    /// The `apns-push-type` header.
    public var pushType: APNsPushType
    /// The full `apns-topic`, push-type suffix included (see ``APNsPushType/topic(bundleID:)``).
    public var topic: String
    /// `apns-priority` (5 or 10); nil omits the header, which APNs reads as 10.
    public var priority: Int?
    /// `apns-expiration` (sent as Unix seconds); nil omits the header.
    public var expiration: Date?
    /// `apns-collapse-id` (at most 64 bytes); nil omits the header.
    public var collapseID: String?
    /// `apns-id`, sent in lowercase; APNs echoes it back.
    public var apnsID: UUID
    /// The JSON body, already fitted to 4096 bytes.
    public var body: Data

    public init(
        deviceToken: String,
        environment: APNsEnvironment,
        pushType: APNsPushType,
        topic: String,
        priority: Int? = nil,
        expiration: Date? = nil,
        collapseID: String? = nil,
        apnsID: UUID = UUID(),
        body: Data
    ) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.body = body
    }
}
