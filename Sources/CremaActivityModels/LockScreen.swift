extension OrderActivityAttributes.ContentState {
    /// The Lock Screen (and banner, and Mac notification) presentation: the roomiest family.
    public struct LockScreen: Codable, Hashable, Sendable {
        /// One line, at most 40 display columns: "Your order is ready!".
        public var title: String
        /// Up to two lines, at most 60 display columns: "Pickup: counter · Market St".
        public var subtitle: String
        /// One small line, at most 52 columns: "#42 · Oat latte, grande + 2 more"; first to go when space is short.
        public var detail: String?
        /// "in 3 min", "any moment now" (correct when sent), at most 20 columns; absent once ready.
        public var etaRelative: String?
        /// "10:05 AM" in the store's time zone, at most 10 columns; absent once ready.
        public var etaAbsolute: String?

        public init(title: String, subtitle: String, detail: String? = nil, etaRelative: String? = nil, etaAbsolute: String? = nil) {
            self.title = title
            self.subtitle = subtitle
            self.detail = detail
            self.etaRelative = etaRelative
            self.etaAbsolute = etaAbsolute
        }
    }
}
