public import Foundation

/// A webhook endpoint as the API answers it. `secret` is present only in the answer that registered it: it is
/// stored sealed and never shown again.
public struct WebhookEndpointResponse: Codable, Sendable, Hashable {
    public var id: String
    public var url: String
    public var events: [String]
    /// nil: every store of the tenant.
    public var stores: [String]?
    public var createdAt: Date
    public var disabledAt: Date?
    public var disabledReason: String?
    public var secret: String?

    enum CodingKeys: String, CodingKey {
        case id, url, events, stores, secret
        case createdAt = "created_at", disabledAt = "disabled_at", disabledReason = "disabled_reason"
    }

    public init(
        id: String, url: String, events: [String], stores: [String]?, createdAt: Date, disabledAt: Date?, disabledReason: String?,
        secret: String? = nil
    ) {
        self.id = id
        self.url = url
        self.events = events
        self.stores = stores
        self.createdAt = createdAt
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
        self.secret = secret
    }
}

/// `GET /v1/webhooks`.
public struct WebhookEndpointListResponse: Codable, Sendable, Hashable {
    public var webhooks: [WebhookEndpointResponse]

    public init(webhooks: [WebhookEndpointResponse]) { self.webhooks = webhooks }
}

/// One delivery of an event to an endpoint, as its log shows it.
public struct WebhookDeliveryResponse: Codable, Sendable, Hashable {
    public var id: Int64
    public var eventID: String
    public var eventType: String
    public var orderID: String?
    /// `pending`, `inflight`, `sent` or `dead`.
    public var state: String
    /// Attempts since it was written (or last replayed).
    public var attempts: Int
    public var maxAttempts: Int
    public var replays: Int
    /// The receiver's last HTTP status; nil when no answer came (timeout, refused connection, refused address).
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var nextAttemptAt: Date?
    public var sentAt: Date?
    public var finishedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, state, attempts, replays
        case eventID = "event_id", eventType = "event_type", orderID = "order_id", maxAttempts = "max_attempts"
        case lastStatus = "last_status", lastError = "last_error", createdAt = "created_at", nextAttemptAt = "next_attempt_at"
        case sentAt = "sent_at", finishedAt = "finished_at"
    }

    public init(
        id: Int64, eventID: String, eventType: String, orderID: String?, state: String, attempts: Int, maxAttempts: Int, replays: Int,
        lastStatus: Int?, lastError: String?, createdAt: Date, nextAttemptAt: Date?, sentAt: Date?, finishedAt: Date?
    ) {
        self.id = id
        self.eventID = eventID
        self.eventType = eventType
        self.orderID = orderID
        self.state = state
        self.attempts = attempts
        self.maxAttempts = maxAttempts
        self.replays = replays
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.sentAt = sentAt
        self.finishedAt = finishedAt
    }
}

/// `GET /v1/webhooks/{id}/deliveries`, newest first; `next_before` pages back (nil on the last page).
public struct WebhookDeliveryListResponse: Codable, Sendable, Hashable {
    public var deliveries: [WebhookDeliveryResponse]
    public var nextBefore: Int64?

    enum CodingKeys: String, CodingKey { case deliveries, nextBefore = "next_before" }

    public init(deliveries: [WebhookDeliveryResponse], nextBefore: Int64?) {
        self.deliveries = deliveries
        self.nextBefore = nextBefore
    }
}
