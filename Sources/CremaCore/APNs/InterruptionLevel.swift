/// How hard an alert may interrupt (`aps.interruption-level`); time-sensitive breaks through Focus, so it is
/// kept for the moments the customer must act on now.
public enum InterruptionLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"

    /// Ready and canceled need the customer now (walk to the counter, or stop walking); a delay is worth a
    /// normal alert; the rest are routine.
    public static func forEvent(_ event: OrderEventType) -> InterruptionLevel {
        switch event {
        case .ready, .canceled: .timeSensitive
        case .delayed: .active
        case .placed, .started, .pickedUp: .passive
        }
    }
}
