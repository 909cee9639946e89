extension OrderActivityAttributes.ContentState {
    /// Left of the camera in the Dynamic Island (and the Mac menu bar): the state's symbol, then this text.
    public struct CompactLeading: Codable, Hashable, Sendable {
        /// The order number as the counter calls it ("#42"); at most 4 display columns.
        public var text: String

        public init(text: String) {
            self.text = text
        }
    }
}
