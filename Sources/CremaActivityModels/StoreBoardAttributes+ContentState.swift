public import Foundation

extension StoreBoardAttributes {
    /// What the board shows now: the numbers being made and ready, the wait, the store's announcement, and each
    /// presentation's texts already worded and cut to fit, like the order activity's (docs/activity-contract.md).
    ///
    /// The numbers and dates mean the same in every language; the few words are in `language`, the language most
    /// of the store's waiting customers use (docs/broadcast.md, "Mixed-language audiences").
    public struct ContentState: Codable, Hashable, Sendable {
        /// Order numbers being made (queued or preparing), oldest first; at most `StoreBoardAttributes.listLimit`.
        public var preparing: [Int]
        /// Order numbers ready at the counter, oldest first; at most `StoreBoardAttributes.listLimit`.
        public var ready: [Int]
        /// About how many minutes a new order waits now; absent when nothing is being made.
        public var waitMinutes: Int?
        /// The store's current announcement ("Espresso machine back at 10:30"), cut to 80 columns; absent when none.
        public var announcement: String?
        /// The BCP 47 language the texts below are in ("en", "es", "ja").
        public var language: String
        /// When this state was computed; the device keeps the newest (APNs may reorder a channel's messages).
        public var updatedAt: Date
        public var compactLeading: CompactLeading
        public var compactTrailing: CompactTrailing
        public var minimal: Minimal
        public var small: Small
        public var lockScreen: LockScreen

        public init(
            preparing: [Int], ready: [Int], waitMinutes: Int?, announcement: String?, language: String, updatedAt: Date,
            compactLeading: CompactLeading, compactTrailing: CompactTrailing, minimal: Minimal, small: Small, lockScreen: LockScreen
        ) {
            self.preparing = preparing
            self.ready = ready
            self.waitMinutes = waitMinutes
            self.announcement = announcement
            self.language = language
            self.updatedAt = updatedAt
            self.compactLeading = compactLeading
            self.compactTrailing = compactTrailing
            self.minimal = minimal
            self.small = small
            self.lockScreen = lockScreen
        }

        /// Left of the camera: the newest ready number ("#40"), or the board's symbol when none is ready; 4 columns.
        public struct CompactLeading: Codable, Hashable, Sendable {
            public var text: String?
            public init(text: String?) { self.text = text }
        }

        /// Right of the camera: the wait ("8 min"), at most 6 columns.
        public struct CompactTrailing: Codable, Hashable, Sendable {
            public var text: String
            public init(text: String) { self.text = text }
        }

        /// The smallest form: how many orders are ready ("3"), at most 3 columns.
        public struct Minimal: Codable, Hashable, Sendable {
            public var text: String
            public init(text: String) { self.text = text }
        }

        /// Apple Watch Smart Stack and CarPlay: "Market St" (18 columns) over "Ready 38 40" (22 columns).
        public struct Small: Codable, Hashable, Sendable {
            public var title: String
            public var status: String
            public init(title: String, status: String) {
                self.title = title
                self.status = status
            }
        }

        /// The Lock Screen: "Ready: 38, 40" (40 columns), "Making: 41, 42 · about 8 min" (60 columns), and the
        /// announcement (80 columns) when there is one.
        public struct LockScreen: Codable, Hashable, Sendable {
            public var title: String
            public var subtitle: String
            public var announcement: String?
            public init(title: String, subtitle: String, announcement: String?) {
                self.title = title
                self.subtitle = subtitle
                self.announcement = announcement
            }
        }
    }

    /// The most numbers each list carries; a longer queue shows its oldest numbers and "+N" in the texts.
    public static let listLimit = 24
}
