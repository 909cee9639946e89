public import Foundation

/// When an order has waited too long: pure, so the sweep that closes orders decides with the same rule the
/// tests check, at whatever `now` its injected clock says.
public enum OrderExpiry {
    /// Why `order` is overdue at `now` under `limits`, or nil while it may still wait. Only `ready` (since it became
    /// ready, which is its last event) and `queued` (since it was placed) orders expire; an order being made never does.
    public static func due(_ order: Order, limits: ExpiryLimits, now: Date) -> ExpiryReason? {
        switch order.state {
        case .ready: now >= order.updatedAt.addingTimeInterval(limits.ready) ? .notCollected : nil
        case .queued: now >= order.placedAt.addingTimeInterval(limits.queued) ? .neverStarted : nil
        case .preparing, .pickedUp, .canceled: nil
        }
    }
}
