public import Foundation

/// What a POS says when an order is placed: everything the order starts with.
public struct OrderPlacement: Sendable, Hashable {
    public var storeID: String
    public var posRef: String
    public var customerRef: String?
    public var displayName: String
    public var locale: String
    public var items: [OrderItem]
    public var eta: Date

    public init(
        storeID: String,
        posRef: String,
        customerRef: String?,
        displayName: String,
        locale: String,
        items: [OrderItem],
        eta: Date
    ) {
        self.storeID = storeID
        self.posRef = posRef
        self.customerRef = customerRef
        self.displayName = displayName
        self.locale = locale
        self.items = items
        self.eta = eta
    }
}
