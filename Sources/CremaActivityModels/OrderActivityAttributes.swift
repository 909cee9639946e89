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
public struct OrderActivityAttributes: Codable, Hashable, Sendable {
    /// The store's display name, as the store set it ("Market St").
    public var storeName: String
    /// The number printed on the cup and called at the counter.
    public var orderNumber: Int
    /// The name the customer gave at the till, already cut to its display budget.
    public var customerName: String
    /// One line naming what was ordered ("Oat latte, grande + 2 more"), localized and cut to its budget.
    public var itemsSummary: String

    public init(storeName: String, orderNumber: Int, customerName: String, itemsSummary: String) {
        self.storeName = storeName
        self.orderNumber = orderNumber
        self.customerName = customerName
        self.itemsSummary = itemsSummary
    }
}
