/// Where the order is, as the app's views branch on it; raw values are Crema's API state names.
public enum OrderActivityStatus: String, Codable, Hashable, Sendable, CaseIterable {
    case queued
    case preparing
    case ready
    case pickedUp = "picked_up"
    case canceled
}
