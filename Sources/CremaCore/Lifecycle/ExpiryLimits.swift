public import Foundation

/// How long a store lets an order wait before Crema closes it: a forgotten order would otherwise keep its Live
/// Activity on the customer's Lock Screen (and on the board) for as long as ActivityKit allows, up to 12 hours.
public struct ExpiryLimits: Sendable, Hashable {
    /// Ready but not picked up, counted from when it became ready.
    public var ready: TimeInterval
    /// Queued and never started, counted from when it was placed (a delay does not restart it).
    public var queued: TimeInterval

    /// 2 hours uncollected, 4 hours never started: longer than any real wait at a counter, far shorter than
    /// ActivityKit's 8 hours on the Lock Screen.
    public static let standard = ExpiryLimits(ready: 2 * 3600, queued: 4 * 3600)

    /// What a store may set, in whole minutes: at least 1 minute, at most 7 days.
    public static let minutesRange: ClosedRange<Int> = 1...10_080

    public init(ready: TimeInterval, queued: TimeInterval) {
        self.ready = ready
        self.queued = queued
    }

    public init(readyMinutes: Int, queuedMinutes: Int) {
        self.init(ready: TimeInterval(readyMinutes) * 60, queued: TimeInterval(queuedMinutes) * 60)
    }

    public var readyMinutes: Int { Int(ready / 60) }
    public var queuedMinutes: Int { Int(queued / 60) }
}
