extension Order {
    /// The order with what identifies its customer removed (docs/data-lifecycle.md): no customer ref, no display
    /// name, no free-text reasons. Counts and timings (number, items, state, version, times) stay for reporting.
    public func withoutPersonalData() -> Order {
        var order = self
        order.customerRef = nil
        order.displayName = ""
        order.delayReason = nil
        order.cancelReason = nil
        return order
    }
}
