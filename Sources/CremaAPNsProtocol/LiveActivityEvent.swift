/// The `aps.event` of a Live Activity push: what the push does to the activity on the device.
public enum LiveActivityEvent: String, Sendable, Hashable, Codable, CaseIterable {
    case start
    case update
    case end
}
