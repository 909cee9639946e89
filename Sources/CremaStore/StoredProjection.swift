import CremaAPNsProtocol
import CremaActivityModels
import CremaCore
import CremaPostgres
import Foundation

/// The projection stored with each order: the `ContentState` a device would receive, encoded exactly as
/// ActivityKit decodes it (Foundation's default strategies, so dates are seconds since 2001).
enum StoredProjection {
    /// An order command stores the projection its plan carries (`DeliveryPlan.projection`): the state its Live Activity
    /// pushes carry, projected once. Written directly (`ContentState.encode(to:)`, once per event), the bytes
    /// `JSONEncoder` with `.sortedKeys` and its default escaping wrote before.
    static func json(_ state: OrderActivityAttributes.ContentState) throws -> PostgresJSON {
        var writer = JSONWriter(escapingSlashes: true)
        try state.encode(to: &writer)
        return PostgresJSON(text: writer.text)
    }

    /// The projection of `order` at `now`, for the work that changes an order without planning pushes (erasure and
    /// retention, `PersonalDataScrub`).
    static func json(_ order: Order, storeName: String, timezone: String, now: Date) throws -> PostgresJSON {
        try json(
            OrderProjector.contentState(
                order: order, storeName: storeName, timeZone: TimeZone(identifier: timezone) ?? .gmt, now: now, locale: order.locale))
    }
}
