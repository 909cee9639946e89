import Hummingbird
import Synchronization

/// The registered routes, so a request for a known path with an unsupported method can be answered
/// 405 with `Allow` rather than Hummingbird's 404. Filled once after the routes are registered.
final class RouteTable: Sendable {
    private let patterns = Mutex<[(segments: [Substring], method: String)]>([])

    func record(_ routes: [Router<CremaRequestContext>.RouteDescription]) {
        patterns.withLock { table in
            table = routes.map { ($0.path.description.split(separator: "/"), $0.method.rawValue) }
        }
    }

    /// The methods the path supports, sorted; empty when no route matches the path at all.
    func methods(for path: String) -> [String] {
        let segments = path.split(separator: "/")
        return patterns.withLock { table in
            Set(table.filter { Self.matches($0.segments, segments) }.map(\.method)).sorted()
        }
    }

    private static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
        pattern.count == path.count && zip(pattern, path).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
    }
}
