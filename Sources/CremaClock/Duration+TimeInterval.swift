public import Foundation

extension Duration {
    /// The duration in seconds, as `Date` arithmetic takes it: a lease, a lifetime or a heartbeat given as a `Duration`
    /// (what a clock sleeps for) becomes the interval added to the clock's `now`, spelled once rather than in every user.
    public var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
