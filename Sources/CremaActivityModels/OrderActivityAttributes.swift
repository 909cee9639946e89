/// The static half of an order's Live Activity: what never changes while the order lives.
///
/// Crema sends it once, in the `attributes` of a push-to-start body, and ActivityKit decodes it with a default
/// `JSONDecoder`. This module imports only Foundation so that it builds on Linux for the server and on iOS for
/// the app; ActivityKit is not available on Linux, so the app adds the conformance itself:
///
/// ```swift
/// import ActivityKit
/// import CremaActivityModels
///
/// extension OrderActivityAttributes: ActivityAttributes {}
/// ```
///
/// The push's `attributes-type` is `"OrderActivityAttributes"`, this type's name: do not rename it.
///
/// `orderID` and `storeID` let an app that did not start the activity itself (a push-to-start) tell Crema which
/// order the activity's update token belongs to (`PUT /v1/orders/{orderID}/live-activity-token`).
public struct OrderActivityAttributes: Codable, Hashable, Sendable {
    /// The order's id as Crema's API writes it: a lowercase UUID.
    public var orderID: String
    /// The store the order belongs to (`store_id` in the API).
    public var storeID: String
    /// The store's display name, as the store set it ("Market St").
    public var storeName: String
    /// The number printed on the cup and called at the counter.
    public var orderNumber: Int
    /// The name the customer gave at the till, already cut to its display budget.
    public var customerName: String
    /// One line naming what was ordered ("Oat latte, grande + 2 more"), localized and cut to its budget.
    public var itemsSummary: String

    public init(
        orderID: String, storeID: String, storeName: String, orderNumber: Int, customerName: String, itemsSummary: String
    ) {
        self.orderID = orderID
        self.storeID = storeID
        self.storeName = storeName
        self.orderNumber = orderNumber
        self.customerName = customerName
        self.itemsSummary = itemsSummary
    }
}

extension OrderActivityAttributes {
    /// The identity part of the attributes, the same one every Live Activity push carries in its `crema` key.
    public var identity: OrderActivityIdentity {
        OrderActivityIdentity(orderID: orderID, storeID: storeID, number: orderNumber)
    }
}
