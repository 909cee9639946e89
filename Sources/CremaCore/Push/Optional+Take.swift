extension Optional {
    /// Sets self to nil and says whether there was anything to remove: one step of an `APNsBodyFitter` drop list.
    mutating func take() -> Bool {
        defer { self = nil }
        return self != nil
    }
}
