public import CremaAPNsProtocol

extension InterruptionLevel {
    /// Ready and canceled need the customer now (walk to the counter, or stop walking); a delay is worth a
    /// normal alert; the rest are routine.
    public static func forEvent(_ event: OrderEventType) -> InterruptionLevel {
        switch event {
        case .ready, .canceled: .timeSensitive
        case .delayed: .active
        case .placed, .started, .pickedUp, .expired: .passive
        }
    }
}
