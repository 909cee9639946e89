import Foundation

/// One request as the listener read it, whatever the HTTP version: the input to validation and recording.
struct SimulatorExchange: Sendable {
    var method: String
    var uri: String
    var headers: [(name: String, value: String)]
    var body: Data
    var receivedAt: Date

    /// The single value of a header (names compare case-insensitively); the first when repeated.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }

    /// The path without its query string.
    var path: String { String(uri.prefix { $0 != "?" }) }

    /// A query parameter's value (no percent-decoding beyond what hex tokens need).
    func query(_ name: String) -> String? {
        guard let start = uri.firstIndex(of: "?") else { return nil }
        for pair in uri[uri.index(after: start)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.first.map(String.init) == name {
                return parts.count == 2 ? String(parts[1]).removingPercentEncoding : ""
            }
        }
        return nil
    }
}
