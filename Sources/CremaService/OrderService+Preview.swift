import CremaClock
public import CremaCore
public import CremaStore
public import Foundation

/// `GET /v1/orders/{id}/preview`, asked of the planner: the order's last change is planned again now, with the
/// targets the order has now and the decisions its event found, through the context `apply` gives the planner. Read
/// only: nothing is locked, claimed or written.
extension OrderService {
    /// The planner's plan for the order's last change made now, for its targets and for one device of each kind; nil
    /// when no order with this id is in `scope`. Asked at the instant of the change, before anything else happened,
    /// `plan` is the plan the change wrote.
    public func preview(orderID: UUID, in scope: TenantScope) async throws(StoreError) -> DeliveryPreview? {
        let now = clock.now
        guard let change = try await database.orders.lastChange(id: orderID, in: scope, defaultBundleID: defaultApp(scope), now: now) else {
            return nil
        }
        let context = Self.context(order: change.order, previous: change.previous, event: change.event, inputs: change.inputs, at: now)
        return DeliveryPreview(context, policy: deliveryPolicy, sampleBundleID: defaultBundleID)
    }
}
