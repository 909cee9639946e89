/// Where an order is in its life; the raw values are the JSON values of the public API.
public enum OrderState: String, Sendable, Hashable, Codable, CaseIterable {
    case queued
    case preparing
    case ready
    case pickedUp = "picked_up"
    case canceled

    /// Terminal states accept no further events.
    public var isTerminal: Bool {
        switch self {
        case .pickedUp, .canceled: true
        case .queued, .preparing, .ready: false
        }
    }

    /// The states a store board shows, in the order a barista works through them.
    public static let open: [OrderState] = [.queued, .preparing, .ready]
}
