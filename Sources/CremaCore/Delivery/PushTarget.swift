public import CremaAPNsProtocol
public import Foundation

/// Where a push can go, as the planner sees it: which kind of token and which row holds it. The token itself
/// stays in the database and the dispatcher; planning never needs it, so it never reaches a plan or a log.
public struct PushTarget: Sendable, Hashable {
    public var ref: PushTargetRef
    public var environment: APNsEnvironment
    /// When the token was registered or last rotated; a 410 older than this does not retire it.
    public var registeredAt: Date
    /// The app the token belongs to: its pushes carry this bundle id's topic and are signed with its key.
    public var bundleID: String
    /// A Live Activity token's `frequent_updates`, as the app registered it (Apple's default, true, for every other
    /// kind): false means the customer turned frequent updates off, and only what must wake them goes at priority 10.
    public var frequentUpdates: Bool

    public init(ref: PushTargetRef, environment: APNsEnvironment, registeredAt: Date, bundleID: String, frequentUpdates: Bool = true) {
        self.ref = ref
        self.environment = environment
        self.registeredAt = registeredAt
        self.bundleID = bundleID
        self.frequentUpdates = frequentUpdates
    }

    public var kind: PushTargetKind { ref.kind }
}

/// Identifies one registered token: Live Activity tokens live per order, the others per customer.
public struct PushTargetRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var kind: PushTargetKind
    public var id: Int64

    public init(kind: PushTargetKind, id: Int64) {
        self.kind = kind
        self.id = id
    }

    public static func < (lhs: PushTargetRef, rhs: PushTargetRef) -> Bool {
        (lhs.kind.order, lhs.id) < (rhs.kind.order, rhs.id)
    }

    public var description: String { "\(kind.rawValue)#\(id)" }
}

/// The four kinds of token the iOS app registers (docs/design.md §5).
public enum PushTargetKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// One running Live Activity's update token: `update` and `end`.
    case liveActivity = "live_activity"
    /// The customer's push-to-start token for `OrderActivityAttributes`: `start`.
    case pushToStart = "push_to_start"
    /// A device token for ordinary notifications.
    case alert
    /// A WidgetKit push token: `content-changed` reloads.
    case widget

    /// Planning order: activity first, then what depends on whether an activity carried the news.
    var order: Int {
        switch self {
        case .liveActivity: 0
        case .pushToStart: 1
        case .alert: 2
        case .widget: 3
        }
    }
}
