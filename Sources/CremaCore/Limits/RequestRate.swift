/// A sustained request rate and the burst above it, as `rate/burst` (`200/400`); the text `0` means "no rate limit".
/// Held apart from its text so a bad value is refused where it is read, never where a request is counted.
public struct RequestRate: Sendable, Hashable, CustomStringConvertible {
    /// Requests per second a caller may keep up.
    public var perSecond: Int
    /// Requests a caller may send at once after a quiet spell; at least `perSecond`.
    public var burst: Int

    /// The largest rate or burst accepted: far above any real client, low enough that the arithmetic never overflows.
    public static let maximum = 1_000_000

    public init?(perSecond: Int, burst: Int) {
        guard (1...Self.maximum).contains(perSecond), (perSecond...Self.maximum).contains(burst) else { return nil }
        self.perSecond = perSecond
        self.burst = burst
    }

    /// `rate/burst`, or `rate` alone (burst = rate). `0` is not a rate: see `RateSetting`.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let rate = Int(parts[0]), let burst = parts.count == 2 ? Int(parts[1]) : rate else {
            return nil
        }
        self.init(perSecond: rate, burst: burst)
    }

    public var description: String { "\(perSecond)/\(burst)" }
}

/// A rate limit as configured: a rate, or off (`0`).
public enum RateSetting: Sendable, Hashable, CustomStringConvertible {
    case off
    case limited(RequestRate)

    /// `0` (off), `rate` or `rate/burst`; nil for anything else.
    public init?(parsing text: String) {
        if text == "0" {
            self = .off
        } else if let rate = RequestRate(parsing: text) {
            self = .limited(rate)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .off: "0"
        case .limited(let rate): rate.description
        }
    }
}
