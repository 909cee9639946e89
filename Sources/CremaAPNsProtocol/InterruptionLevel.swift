/// How hard an alert may interrupt (`aps.interruption-level`); time-sensitive breaks through Focus, so it is
/// kept for the moments the customer must act on now.
public enum InterruptionLevel: String, Sendable, Hashable, Codable, CaseIterable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
}
