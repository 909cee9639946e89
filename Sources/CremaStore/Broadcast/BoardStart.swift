/// A customer's device to start a store's board on: the push-to-start token of `StoreBoardAttributes` activities
/// the customer registered for that store (their consent), due because they have an order there the board was not
/// started for yet.
public struct BoardStart: Sendable, Hashable {
    public var customerRef: String
    public var token: String
    public var environment: String

    public init(customerRef: String, token: String, environment: String) {
        self.customerRef = customerRef
        self.token = token
        self.environment = environment
    }

    /// Stores one customer may have asked to follow; past it a registration is refused (`tokens_per_customer`).
    public static let maxStoresPerCustomer = 20
    /// Starts sent with one broadcast at most; the rest go with the next one.
    public static let batchLimit = 100
}
