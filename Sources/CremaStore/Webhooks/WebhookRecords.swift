public import CremaCore
public import Foundation

/// A registered receiver as stored: the secret only sealed.
public struct StoredWebhookEndpoint: Sendable, Hashable {
    public var tenant: String
    public var id: UUID
    public var url: String
    public var events: [WebhookEventType]
    /// nil: every store of the tenant.
    public var stores: [String]?
    /// AES-256-GCM under `CREMA_MASTER_KEY`, bound to the endpoint (`WebhookSecret.context`).
    public var sealedSecret: [UInt8]
    public var createdAt: Date
    public var disabledAt: Date?
    public var disabledReason: String?

    public init(
        tenant: String, id: UUID, url: String, events: [WebhookEventType], stores: [String]?, sealedSecret: [UInt8], createdAt: Date,
        disabledAt: Date? = nil, disabledReason: String? = nil
    ) {
        self.tenant = tenant
        self.id = id
        self.url = url
        self.events = events
        self.stores = stores
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
        self.disabledAt = disabledAt
        self.disabledReason = disabledReason
    }
}

/// A fact to tell the tenant's receivers, written in the transaction that made it true (only when some live endpoint
/// wants its type and store). `body` is the JSON that is signed and sent.
public struct WebhookDraft: Sendable, Hashable {
    public var id: UUID
    public var type: WebhookEventType
    public var body: String

    public init(id: UUID, type: WebhookEventType, body: String) {
        self.id = id
        self.type = type
        self.body = body
    }
}

/// One delivery as the dispatcher sends it: where, what, and which attempt this is.
public struct ClaimedWebhook: Sendable, Hashable {
    public var tenant: String
    public var id: Int64
    public var endpointID: UUID
    public var url: String
    public var sealedSecret: [UInt8]
    public var eventID: UUID
    public var eventType: String
    public var body: String
    /// This attempt's number (1 for the first).
    public var attempts: Int
}

/// What became of one attempt.
public enum WebhookOutcome: Sendable, Hashable {
    /// A 2xx answer.
    case sent(status: Int)
    /// Failed; tried again at `at`.
    case retry(at: Date, status: Int?, error: String)
    /// Out of attempts.
    case dead(status: Int?, error: String)
    /// The receiver answered 410 Gone: the endpoint is disabled and everything still pending for it is dead.
    case gone(status: Int)
}

/// One delivery in an endpoint's log (`GET /v1/webhooks/{id}/deliveries`).
public struct WebhookDeliveryRecord: Sendable, Hashable {
    public var id: Int64
    public var eventID: UUID
    public var eventType: String
    public var orderID: UUID?
    public var state: String
    public var attempts: Int
    public var replays: Int
    public var lastStatus: Int?
    public var lastError: String?
    public var createdAt: Date
    public var nextAttemptAt: Date?
    public var sentAt: Date?
    public var finishedAt: Date?
}
