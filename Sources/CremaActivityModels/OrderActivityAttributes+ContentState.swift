public import Foundation

extension OrderActivityAttributes {
    /// The dynamic half of the Live Activity: everything every surface shows, already worded and cut to fit.
    ///
    /// The app's views stay dumb: each family reads its own struct, whose texts Crema has localized and cut
    /// (on grapheme boundaries, with "…") to the family's budget in display columns (docs/activity-contract.md).
    ///
    /// Encoded with Foundation's default strategies, because ActivityKit decodes `content-state` with a plain
    /// `JSONDecoder`: keys are these property names, `Date`s are seconds since 2001-01-01 (not Unix seconds),
    /// and optional fields are absent rather than `null` when Crema leaves them out.
    public struct ContentState: Codable, Hashable, Sendable {
        /// The order's state; never dropped from a payload.
        public var status: OrderActivityStatus
        /// Step `step` of `stepCount` (received, being made, ready); 0 for a canceled order.
        public var step: Int
        public var stepCount: Int
        /// When the order is expected to be ready; for live countdowns (`Text(timerInterval:)`) on device.
        public var eta: Date
        /// Where to collect a ready order, as the store wrote it ("counter"); absent when none was given.
        public var pickupPoint: String?
        /// Who is making the order; absent before it starts.
        public var baristaName: String?
        /// The SF Symbol for the state, shown beside `compactLeading` and as the `minimal` fallback.
        public var symbolName: String
        /// 0...1, for `ProgressView(value:)`.
        public var progress: Double
        public var compactLeading: CompactLeading
        public var compactTrailing: CompactTrailing
        public var minimal: Minimal
        public var small: Small
        public var lockScreen: LockScreen
        /// The receipt of the push that brought this state (`"crema":{"receipt":…}` carries the same string): the app
        /// posts it to `POST /v1/me/receipts` when it observes the update (`Activity.contentUpdates`), so Crema can
        /// tell the shop the phone got it. Optional and absent from stored states, so apps built before it decode on.
        public var receipt: String?

        public init(
            status: OrderActivityStatus,
            step: Int,
            stepCount: Int,
            eta: Date,
            pickupPoint: String? = nil,
            baristaName: String? = nil,
            symbolName: String,
            progress: Double,
            compactLeading: CompactLeading,
            compactTrailing: CompactTrailing,
            minimal: Minimal,
            small: Small,
            lockScreen: LockScreen,
            receipt: String? = nil
        ) {
            self.status = status
            self.step = step
            self.stepCount = stepCount
            self.eta = eta
            self.pickupPoint = pickupPoint
            self.baristaName = baristaName
            self.symbolName = symbolName
            self.progress = progress
            self.compactLeading = compactLeading
            self.compactTrailing = compactTrailing
            self.minimal = minimal
            self.small = small
            self.lockScreen = lockScreen
            self.receipt = receipt
        }
    }
}
