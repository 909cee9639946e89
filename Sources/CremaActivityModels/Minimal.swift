extension OrderActivityAttributes.ContentState {
    /// The Dynamic Island's smallest form, when several activities share it.
    public struct Minimal: Codable, Hashable, Sendable {
        /// Minutes left ("5m", "5分"), at most 3 display columns; absent means: show `symbolName` alone.
        public var text: String?

        public init(text: String? = nil) {
            self.text = text
        }
    }
}
