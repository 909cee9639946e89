/// "Open" (an order that can still change) in SQL, written once: `OrderState.isTerminal` says it in Swift, and
/// `OpenOrderSQLTests` holds this list, and the partial indexes the migrations build on it, to that.
///
/// A literal list rather than a SQL function: the planner proves a query may use a partial index by comparing the
/// query's predicate with the index's, and the indexes `orders_open_by_store` (migrations 001 and 007) are declared
/// with this same list.
public enum OpenOrderSQL {
    /// `state IN \(unescaped: OpenOrderSQL.states)`
    public static let states: StaticString = "('queued', 'preparing', 'ready')"
}
