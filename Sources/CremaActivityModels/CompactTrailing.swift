public import Foundation

extension OrderActivityAttributes.ContentState {
    /// Right of the camera in the Dynamic Island: how long to wait, or the state in a word.
    public struct CompactTrailing: Codable, Hashable, Sendable {
        /// "3 min", "Ready", "3分"; at most 6 display columns. Correct when sent; prefer `countdownEnd`.
        public var text: String
        /// When present, show a live countdown to this date instead of `text` (it keeps itself current
        /// between pushes); absent once the order is ready or its ETA has passed.
        public var countdownEnd: Date?

        public init(text: String, countdownEnd: Date? = nil) {
            self.text = text
            self.countdownEnd = countdownEnd
        }
    }
}
