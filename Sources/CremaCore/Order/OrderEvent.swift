public import Foundation

/// An event after placement, with what it carries (docs/design.md §3).
public enum OrderEvent: Sendable, Hashable {
    case started(barista: String)
    case delayed(eta: Date, reason: String?)
    case ready(pickupPoint: String?)
    case pickedUp
    case canceled(reason: String)
    /// Recorded by the expiry sweep only; the reason is a code, never free text.
    case expired(reason: ExpiryReason)

    public var type: OrderEventType {
        switch self {
        case .started: .started
        case .delayed: .delayed
        case .ready: .ready
        case .pickedUp: .pickedUp
        case .canceled: .canceled
        case .expired: .expired
        }
    }
}
