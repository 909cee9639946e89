public import CremaAPNsProtocol
public import CremaActivityModels
public import CremaCore
public import Foundation

/// `GET /v1/orders/{id}/preview`: the projection computed at `now` for every presentation family, and the
/// APNs bodies Crema would send for the order's current state, each with its size and what was dropped to
/// fit 4096 bytes. Which of these a given customer receives is the delivery planner's decision.
public struct OrderPreview: Codable, Sendable {
    public var orderID: String
    public var state: OrderState
    public var version: Int
    public var locale: String
    public var generatedAt: Date
    public var families: Families
    public var contentState: JSONValue
    public var bodies: [String: BodyPreview]

    /// Each presentation family's part of the content state.
    public struct Families: Codable, Sendable {
        public var compactLeading: OrderActivityAttributes.ContentState.CompactLeading
        public var compactTrailing: OrderActivityAttributes.ContentState.CompactTrailing
        public var minimal: OrderActivityAttributes.ContentState.Minimal
        public var small: OrderActivityAttributes.ContentState.Small
        public var lockScreen: OrderActivityAttributes.ContentState.LockScreen
    }

    /// One APNs request body: `push_type` is the `apns-push-type` it goes with.
    public struct BodyPreview: Codable, Sendable {
        public var pushType: String
        public var bytes: Int
        public var droppedFields: [String]
        public var body: JSONValue

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

    /// - Parameters:
    ///   - lastEvent: the event that produced the order's state; it decides the alert wording.
    ///   - etaBefore: the order's ETA before that event; whether a delay alerts depends on how far it moved.
    ///   - policy: the delivery planner's numbers. The Live Activity bodies carry an alert exactly when the planner's
    ///     would (`DeliveryPlanner.isUrgent`), as sent within the activity's priority budget.
    public init(
        order: Order, lastEvent: OrderEventType, etaBefore: Date?, store: Store, now: Date, policy: DeliveryPolicy = DeliveryPolicy()
    ) throws {
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

        let last = lastEvent
        let alert = DeliveryPlanner.isUrgent(last, etaBefore: etaBefore, etaAfter: order.eta, policy: policy) ? last : nil
        func activity(_ event: LiveActivityEvent, alert: OrderEventType?) -> APNsBody {
            APNsBodyBuilder.liveActivity(
                order: order, storeName: store.name, timeZone: zone, now: now, locale: order.locale, event: event, alertFor: alert)
        }
        var bodies: [String: BodyPreview] = [:]
        if order.state.isTerminal {
            bodies["liveactivity_end"] = try BodyPreview(pushType: "liveactivity", activity(.end, alert: alert))
        } else {
            bodies["liveactivity_update"] = try BodyPreview(pushType: "liveactivity", activity(.update, alert: alert))
            bodies["liveactivity_start"] = try BodyPreview(pushType: "liveactivity", activity(.start, alert: nil))
        }
        bodies["alert"] = try BodyPreview(
            pushType: "alert",
            APNsBodyBuilder.alert(for: last, order: order, storeName: store.name, timeZone: zone, now: now, locale: order.locale))
        bodies["widgets"] = try BodyPreview(pushType: "widgets", APNsBodyBuilder.widget)
        self.bodies = bodies
    }
}

extension OrderPreview {
    /// The order's ETA before its last event: the latest ETA an earlier event set (`placed`, `delayed`).
    public static func etaBefore(lastOf events: [RecordedEvent]) -> Date? {
        for event in events.dropLast().reversed() {
            if case .string(let text)? = event.data["eta"], let eta = WireCoding.parseRFC3339(text) { return eta }
        }
        return nil
    }
}
