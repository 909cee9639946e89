/// The kinds of event an order can receive; raw values are the `type` field of the API.
public enum OrderEventType: String, Sendable, Hashable, Codable, CaseIterable {
    case placed
    case started
    case delayed
    case ready
    case pickedUp = "picked_up"
    case canceled
    /// Crema closed the order itself: it sat in `queued` or `ready` past its store's limit (never sent by clients).
    case expired

    /// Who may send this event (docs/design.md §3, "who"): least privilege per event, not only per route.
    public var permittedRoles: Set<Role> {
        switch self {
        case .placed: [.pos]
        case .started, .ready: [.barista]
        case .delayed, .pickedUp, .canceled: [.pos, .barista]
        case .expired: [.system]
        }
    }

    /// Events only Crema itself records (the expiry sweep); the events route refuses them and
    /// `allowed_events` never lists them, so no client is told it could send one.
    public var isSystemOnly: Bool { permittedRoles == [.system] }
}
