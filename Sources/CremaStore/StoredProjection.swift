import CremaActivityModels
import CremaCore
import CremaPostgres
import Foundation

/// The projection stored with each order: the `ContentState` a device would receive, encoded exactly as
/// ActivityKit decodes it (Foundation's default strategies, so dates are seconds since 2001).
enum StoredProjection {
    static func json(_ order: Order, storeName: String, timezone: String, now: Date) throws -> PostgresJSON {
        let state = OrderProjector.contentState(
            order: order, storeName: storeName, timeZone: TimeZone(identifier: timezone) ?? .gmt, now: now, locale: order.locale)
        return PostgresJSON(text: String(decoding: try encoder.encode(state), as: UTF8.self))
    }

    /// ActivityKit's strategies and sorted keys, configured once (making one per event showed in profiles).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
