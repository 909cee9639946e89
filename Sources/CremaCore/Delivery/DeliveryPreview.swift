import CremaAPNsProtocol
import Foundation

/// What `GET /v1/orders/{id}/preview` shows, asked of the planner and of nothing else: the plan for the order's last
/// change made again now, for the targets the order has now and the decisions before that change (`plan`: what the
/// dispatcher would be given), and the plan for a customer with one device of each kind and no history (`samples`:
/// the body each kind of device would receive, shown even for an order with no tokens). A preview cannot disagree
/// with a delivery on a body, a priority or a reason, because both are the one planner's answer to one context.
public struct DeliveryPreview: Sendable, Hashable {
    /// The change planned: the order after its last event and before it, the event, the store, the time, the targets
    /// and their history.
    public var context: DeliveryContext
    /// The planner's answer for `context`.
    public var plan: DeliveryPlan
    /// For each kind of token, the planner's answer for `context` with one token of that kind and nothing else.
    public var samples: [PushTargetKind: DeliveryPlan]

    /// - Parameter sampleBundleID: the app of the sample tokens (it names a push's topic, never its body).
    public init(_ context: DeliveryContext, policy: DeliveryPolicy, sampleBundleID: String) {
        self.context = context
        plan = DeliveryPlanner.plan(context, policy: policy)
        var samples: [PushTargetKind: DeliveryPlan] = [:]
        for kind in PushTargetKind.allCases {
            var alone = context
            alone.targets = [Self.sample(kind, at: context.now, bundleID: sampleBundleID)]
            alone.history = []
            samples[kind] = DeliveryPlanner.plan(alone, policy: policy)
        }
        self.samples = samples
    }

    /// A token of `kind` registered at `now`, with Apple's default for frequent updates.
    static func sample(_ kind: PushTargetKind, at now: Date, bundleID: String) -> PushTarget {
        PushTarget(ref: PushTargetRef(kind: kind, id: 0), environment: .production, registeredAt: now, bundleID: bundleID)
    }
}
