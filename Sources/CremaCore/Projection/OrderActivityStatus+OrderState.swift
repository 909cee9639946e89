public import CremaActivityModels

extension OrderActivityStatus {
    /// The wire status of an order state (same raw values).
    public init(_ state: OrderState) {
        switch state {
        case .queued: self = .queued
        case .preparing: self = .preparing
        case .ready: self = .ready
        case .pickedUp: self = .pickedUp
        case .canceled: self = .canceled
        }
    }
}
