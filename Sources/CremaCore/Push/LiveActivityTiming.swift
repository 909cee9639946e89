public import CremaActivityModels
public import Foundation

/// The default `stale-date`, `dismissal-date` and `relevance-score` for a state (docs/design.md §5's starting policy);
/// the delivery planner may override them, the body builder only encodes what it is given.
public enum LiveActivityTiming {
    /// How long past the ETA an unchanged waiting activity is still believable.
    public static let staleGrace: TimeInterval = 10 * 60
    /// How long a ready order may wait at the counter before its activity counts as stale.
    public static let readyStaleAfter: TimeInterval = 30 * 60
    /// How long an ended activity stays on the Lock Screen: 15 min after pickup (docs/design.md §5), 30 after a
    /// cancellation so that it is seen (within the HIG's 15–30 min).
    public static let dismissAfterPickup: TimeInterval = 15 * 60
    public static let dismissAfterCancel: TimeInterval = 30 * 60

    public static func staleDate(_ state: OrderActivityAttributes.ContentState, now: Date) -> Date? {
        switch state.status {
        case .queued, .preparing: max(state.eta, now).addingTimeInterval(staleGrace)
        case .ready: now.addingTimeInterval(readyStaleAfter)
        case .pickedUp, .canceled: nil
        }
    }

    public static func dismissalDate(_ status: OrderActivityStatus, now: Date) -> Date? {
        switch status {
        case .pickedUp: now.addingTimeInterval(dismissAfterPickup)
        case .canceled: now.addingTimeInterval(dismissAfterCancel)
        case .queued, .preparing, .ready: nil
        }
    }

    /// Rises as the order nears ready (25 queued, 50→75 while being made as the ETA nears, 100 ready), so
    /// the most urgent of a customer's activities takes the Dynamic Island; ended activities sink to 0.
    public static func relevanceScore(_ state: OrderActivityAttributes.ContentState, now: Date) -> Double {
        switch state.status {
        case .queued:
            return 25
        case .preparing:
            let left = min(max(state.eta.timeIntervalSince(now), 0), 15 * 60)
            return (50 + 25 * (1 - left / (15 * 60))).rounded()
        case .ready:
            return 100
        case .pickedUp, .canceled:
            return 0
        }
    }
}
