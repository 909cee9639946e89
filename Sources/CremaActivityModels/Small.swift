extension OrderActivityAttributes.ContentState {
    /// The `small` activity family: Apple Watch Smart Stack and CarPlay, with `progress` as a bar.
    public struct Small: Codable, Hashable, Sendable {
        /// "#42 · Market St"; at most 18 display columns.
        public var title: String
        /// "Preparing · 3 min"; at most 22 display columns.
        public var status: String

        public init(title: String, status: String) {
            self.title = title
            self.status = status
        }
    }
}
