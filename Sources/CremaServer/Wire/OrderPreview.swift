import CremaActivityModels
import CremaCore
import CremaStore
import Foundation

/// `GET /v1/orders/{id}/preview`: the projection computed at `now` for every presentation family, and the
/// APNs bodies Crema would send for the order's current state, each with its size and what was dropped to
/// fit 4096 bytes. Which of these a given customer receives is the delivery planner's decision.
struct OrderPreview: Encodable {
    var orderID: String
    var state: OrderState
    var version: Int
    var locale: String
    var generatedAt: Date
    var families: Families
    var contentState: JSONValue
    var bodies: [String: BodyPreview]

    struct Families: Encodable {
        var compactLeading: OrderActivityAttributes.ContentState.CompactLeading
        var compactTrailing: OrderActivityAttributes.ContentState.CompactTrailing
        var minimal: OrderActivityAttributes.ContentState.Minimal
        var small: OrderActivityAttributes.ContentState.Small
        var lockScreen: OrderActivityAttributes.ContentState.LockScreen
    }

    /// One APNs request body: `push_type` is the `apns-push-type` it goes with.
    struct BodyPreview: Encodable {
        var pushType: String
        var bytes: Int
        var droppedFields: [String]
        var body: JSONValue

        enum CodingKeys: String, CodingKey {
            case bytes, body
            case pushType = "push_type", droppedFields = "dropped_fields"
        }

        init(pushType: String, _ apns: APNsBody) throws {
            self.pushType = pushType
            bytes = apns.json.count
            droppedFields = apns.droppedFields
            body = try JSONDecoder().decode(JSONValue.self, from: apns.json)
        }
    }

    enum CodingKeys: String, CodingKey {
        case state, version, locale, families, bodies
        case orderID = "order_id", generatedAt = "generated_at", contentState = "content_state"
    }

    init(detail: OrderDetail, store: Store, now: Date) throws {
        let order = detail.order
        let zone = TimeZone(identifier: store.timezone) ?? .gmt
        let state = OrderProjector.contentState(order: order, storeName: store.name, timeZone: zone, now: now, locale: order.locale)
        orderID = order.id.uuidString.lowercased()
        self.state = order.state
        version = order.version
        locale = order.locale
        generatedAt = now
        families = Families(
            compactLeading: state.compactLeading, compactTrailing: state.compactTrailing, minimal: state.minimal,
            small: state.small, lockScreen: state.lockScreen)
        contentState = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(state))

        // The event that produced this state; it decides the alert wording.
        let last = detail.events.last?.type ?? .placed
        let alerting: Set<OrderEventType> = [.ready, .canceled, .delayed]
        func activity(_ event: LiveActivityEvent, alert: OrderEventType?) -> APNsBody {
            APNsBodyBuilder.liveActivity(
                order: order, storeName: store.name, timeZone: zone, now: now, locale: order.locale, event: event, alertFor: alert)
        }
        var bodies: [String: BodyPreview] = [:]
        if order.state.isTerminal {
            bodies["liveactivity_end"] = try BodyPreview(pushType: "liveactivity", activity(.end, alert: last))
        } else {
            bodies["liveactivity_update"] = try BodyPreview(
                pushType: "liveactivity", activity(.update, alert: alerting.contains(last) ? last : nil))
            bodies["liveactivity_start"] = try BodyPreview(pushType: "liveactivity", activity(.start, alert: nil))
        }
        bodies["alert"] = try BodyPreview(
            pushType: "alert",
            APNsBodyBuilder.alert(for: last, order: order, storeName: store.name, timeZone: zone, now: now, locale: order.locale))
        bodies["widgets"] = try BodyPreview(pushType: "widgets", APNsBodyBuilder.widget)
        self.bodies = bodies
    }
}
