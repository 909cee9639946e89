public import CremaAPNsProtocol
public import CremaActivityModels
public import CremaCore
public import Foundation

/// `GET /v1/orders/{id}/preview`: the order's last change as the delivery planner plans it now (`DeliveryPreview`),
/// written for people. `families` and `content_state` are the plan's projection; `deliveries` and `skips` are the plan
/// for the order's own tokens (what the dispatcher would be given); `bodies` is the plan for a customer with one token
/// of each kind, so an order without tokens shows them too. Nothing here is chosen apart from the planner.
public struct OrderPreview: Codable, Sendable {
    public var orderID: String
    public var state: OrderState
    public var version: Int
    public var locale: String
    public var generatedAt: Date
    public var families: Families
    public var contentState: JSONValue
    public var bodies: [String: BodyPreview]
    public var deliveries: [DeliveryPreviewEntry]
    public var skips: [SkipPreview]

    /// Each presentation family's part of the content state.
    public struct Families: Codable, Sendable {
        public var compactLeading: OrderActivityAttributes.ContentState.CompactLeading
        public var compactTrailing: OrderActivityAttributes.ContentState.CompactTrailing
        public var minimal: OrderActivityAttributes.ContentState.Minimal
        public var small: OrderActivityAttributes.ContentState.Small
        public var lockScreen: OrderActivityAttributes.ContentState.LockScreen
    }

    /// One APNs request body a token of one kind would receive: `push_type` is the `apns-push-type` it goes with,
    /// `priority` its `apns-priority`, `reason_code` and `reason` the planner's why.
    public struct BodyPreview: Codable, Sendable {
        public var pushType: String
        public var priority: Int
        public var reasonCode: String
        public var reason: String
        public var bytes: Int
        public var droppedFields: [String]
        public var body: JSONValue

        enum CodingKeys: String, CodingKey {
            case priority, reason, bytes, body
            case pushType = "push_type", reasonCode = "reason_code", droppedFields = "dropped_fields"
        }

        init(_ planned: PlannedDelivery) throws {
            pushType = planned.pushType.rawValue
            priority = planned.priority
            reasonCode = planned.reason.rawValue
            reason = planned.sentence
            bytes = planned.body.json.count
            droppedFields = planned.body.droppedFields
            body = try JSONDecoder().decode(JSONValue.self, from: planned.body.json)
        }
    }

    /// One push the plan for the order's own tokens holds, as `GET /v1/orders/{id}/deliveries` would list it once
    /// written (`target_kind`, `push_type`, `live_activity_event`, `priority`, `collapse_id`, `reason_code`, `reason`,
    /// `not_before`, `expires_at`), with its body.
    public struct DeliveryPreviewEntry: Codable, Sendable {
        public var targetKind: String
        public var pushType: String
        public var liveActivityEvent: String?
        public var priority: Int
        public var collapseID: String?
        public var reasonCode: String
        public var reason: String
        public var notBefore: Date
        public var expiresAt: Date
        public var bytes: Int
        public var droppedFields: [String]
        public var body: JSONValue

        enum CodingKeys: String, CodingKey {
            case priority, reason, bytes, body
            case targetKind = "target_kind", pushType = "push_type", liveActivityEvent = "live_activity_event",
                collapseID = "collapse_id", reasonCode = "reason_code", notBefore = "not_before", expiresAt = "expires_at",
                droppedFields = "dropped_fields"
        }

        init(_ planned: PlannedDelivery) throws {
            targetKind = planned.target.kind.rawValue
            pushType = planned.pushType.rawValue
            liveActivityEvent = planned.liveActivityEvent?.rawValue
            priority = planned.priority
            collapseID = planned.collapseID
            reasonCode = planned.reason.rawValue
            reason = planned.sentence
            notBefore = planned.notBefore
            expiresAt = planned.expiration
            bytes = planned.body.json.count
            droppedFields = planned.body.droppedFields
            body = try JSONDecoder().decode(JSONValue.self, from: planned.body.json)
        }
    }

    /// A decision of that plan not to push, as the deliveries log would list it (`skipped`).
    public struct SkipPreview: Codable, Sendable {
        public var targetKind: String?
        public var pushType: String?
        public var reasonCode: String
        public var reason: String

        enum CodingKeys: String, CodingKey {
            case reason
            case targetKind = "target_kind", pushType = "push_type", reasonCode = "reason_code"
        }

        init(_ skip: DeliverySkip) {
            targetKind = skip.target?.kind.rawValue
            pushType = skip.pushType?.rawValue
            reasonCode = skip.reason.rawValue
            reason = skip.sentence
        }
    }

    enum CodingKeys: String, CodingKey {
        case state, version, locale, families, bodies, deliveries, skips
        case orderID = "order_id", generatedAt = "generated_at", contentState = "content_state"
    }

    public init(_ preview: DeliveryPreview) throws {
        let order = preview.context.order
        let state = preview.plan.projection
        orderID = order.id.uuidString.lowercased()
        self.state = order.state
        version = order.version
        locale = order.locale
        generatedAt = preview.context.now
        families = Families(
            compactLeading: state.compactLeading, compactTrailing: state.compactTrailing, minimal: state.minimal,
            small: state.small, lockScreen: state.lockScreen)
        contentState = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(state))
        var bodies: [String: BodyPreview] = [:]
        for sample in preview.samples.values {
            for planned in sample.deliveries { bodies[Self.bodyName(planned)] = try BodyPreview(planned) }
        }
        self.bodies = bodies
        deliveries = try preview.plan.deliveries.map(DeliveryPreviewEntry.init)
        skips = preview.plan.skips.map(SkipPreview.init)
    }

    /// A body's key in `bodies`: `liveactivity_start`, `liveactivity_update` or `liveactivity_end`, else the push type
    /// (`alert`, `widgets`).
    static func bodyName(_ planned: PlannedDelivery) -> String {
        planned.liveActivityEvent.map { "\(planned.pushType.rawValue)_\($0.rawValue)" } ?? planned.pushType.rawValue
    }
}
