public import Foundation

/// What APNs (or a compatible server) answered to one push: the status, Apple's reason string, and for 410 the
/// moment the token stopped being valid.
public struct APNsResponse: Sendable, Hashable {
    public var status: Int
    /// The `reason` of the error body (`BadDeviceToken`, `TooManyRequests`, …); nil on success.
    public var reason: String?
    /// The `apns-id` the server echoed (or assigned); for a broadcast, the `apns-request-id` it echoed.
    public var apnsID: UUID?
    /// A broadcast's `apns-unique-id` (APNs sends it in the development environment only): the key to its delivery
    /// log in Apple's Push Notifications Console.
    public var uniqueID: String?
    /// 410 only: when APNs learned the token was no longer valid (the body's `timestamp`, ms since 1970).
    public var timestamp: Date?
    /// The `Retry-After` header in seconds, when the server sent one (429, 503).
    public var retryAfter: TimeInterval?

    public init(status: Int, reason: String? = nil, apnsID: UUID? = nil, timestamp: Date? = nil, retryAfter: TimeInterval? = nil) {
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.timestamp = timestamp
        self.retryAfter = retryAfter
    }

    /// What the sender must do about this answer (docs/apns.md §3).
    public var disposition: APNsDisposition { APNsDisposition(classifying: self) }
}
