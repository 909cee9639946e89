public import CremaAPNsProtocol
public import CremaCore
public import Foundation

/// An outbox row a dispatcher holds under lease: what to send, and to which token as registered now (a token
/// rotated after planning is used; a retired one comes back with `tokenRetired`).
public struct ClaimedDelivery: Sendable, Hashable {
    public var tenantID: String
    /// The app whose key signs this push (nil only for rows planned before tenants, which have no topic either).
    public var bundleID: String?
    public var storeID: String
    public var id: Int64
    public var orderID: UUID
    public var target: PushTargetRef?
    public var pushType: APNsPushType
    public var priority: Int?
    public var topic: String
    public var collapseID: String?
    public var body: String
    public var expiresAt: Date?
    /// Attempts so far, this one included.
    public var attempts: Int
    public var maxAttempts: Int
    /// Nil when the target row is gone.
    public var token: String?
    public var environment: APNsEnvironment?
    public var tokenRetired: Bool
    /// When the row was planned: the event's commit.
    public var plannedAt: Date
}

/// What became of one claimed delivery, written back in batches.
public enum DeliveryOutcome: Sendable, Hashable {
    case sent(status: Int, apnsID: UUID?)
    /// Try again at `at` (backoff or Retry-After).
    case retry(at: Date, status: Int?, reason: String)
    /// Never to be sent: a permanent APNs error, expired, or out of attempts.
    case dead(status: Int?, reason: String)
    /// APNs says the token is gone: the row is dead and the token retired, unless registered again after `since`.
    case tokenRetired(status: Int, reason: String, since: Date?)
    /// The token was retired or removed before sending: nothing sent.
    case skipped(reason: String)
    /// APNs refused the app's signing key (InvalidProviderToken): the row waits, the attempt not counted, until
    /// the app has a key APNs accepts. A configuration mistake never dead-letters a push.
    case heldForKey(at: Date, status: Int?, reason: String)
}

/// One outcome for one row.
public struct DeliveryResult: Sendable, Hashable {
    public var delivery: ClaimedDelivery
    public var outcome: DeliveryOutcome
    public var apnsID: UUID?

    public init(delivery: ClaimedDelivery, outcome: DeliveryOutcome, apnsID: UUID? = nil) {
        self.delivery = delivery
        self.outcome = outcome
        self.apnsID = apnsID
    }
}

/// The outbox as one dispatcher sees it: what it can send and what waits for another instance's key.
public struct OutboxDepth: Sendable, Hashable {
    /// Due rows of apps the dispatcher can sign for.
    public var pending: Int
    public var inflight: Int
    /// Seconds the oldest of those has been due.
    public var oldestPendingAge: TimeInterval
    /// Due rows of apps it has no key for.
    public var unsignable: Int
}
