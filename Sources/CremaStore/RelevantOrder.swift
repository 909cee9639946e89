public import CremaCore

/// One of the customer's open orders with its store's place, as `GET /v1/me/relevance` needs them.
public struct RelevantOrder: Sendable, Hashable {
    public var order: Order
    /// Nil while the store has none.
    public var location: StoreLocation?
}
