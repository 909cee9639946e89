public import CremaAPNsProtocol
public import CremaActivityModels
public import Foundation

/// Everything one Live Activity push says, before encoding: the kind decides which `aps` keys are allowed,
/// so a `start` without attributes or without an alert cannot be built.
public struct LiveActivityPush: Sendable, Hashable {
    /// Which push this is, carrying what only that kind may (and must) carry.
    public enum Kind: Sendable, Hashable {
        /// Push-to-start: ActivityKit requires the attributes and an alert.
        case start(attributes: OrderActivityAttributes, alert: AlertText)
        case update(alert: AlertText?)
        case end(alert: AlertText?)

        public var event: LiveActivityEvent {
            switch self {
            case .start: .start
            case .update: .update
            case .end: .end
            }
        }
    }

    public var kind: Kind
    public var contentState: OrderActivityAttributes.ContentState
    /// Sent as `aps.timestamp` in Unix seconds; the device shows the newest.
    public var timestamp: Date
    public var staleDate: Date?
    /// Only meaningful with `end`.
    public var dismissalDate: Date?
    public var relevanceScore: Double?
    /// `alert.sound` when there is an alert.
    public var sound: String?
    /// Sent next to `aps` as `crema`: which order this activity shows (nil only for bodies built by hand in tests).
    public var identity: OrderActivityIdentity?

    public init(
        kind: Kind,
        contentState: OrderActivityAttributes.ContentState,
        timestamp: Date,
        staleDate: Date? = nil,
        dismissalDate: Date? = nil,
        relevanceScore: Double? = nil,
        sound: String? = "default",
        identity: OrderActivityIdentity? = nil
    ) {
        self.identity = identity
        self.kind = kind
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.sound = sound
    }
}
