import CremaCivilTime
import CremaClock
import Foundation
import Synchronization

/// The `Date` field every answer carries (RFC 9110's IMF-fixdate), formatted once per second rather than per
/// answer.
final class HTTPDateHeader: Sendable {
    private let clock: CremaClock
    private let cache = Mutex<(second: Int, text: String)>((.min, ""))

    init(clock: CremaClock) {
        self.clock = clock
    }

    /// The field's value for the current second.
    var value: String {
        let second = Int(clock.now.timeIntervalSince1970.rounded(.down))
        return cache.withLock { cache in
            if cache.second != second { cache = (second, Self.text(secondsSince1970: second)) }
            return cache.text
        }
    }

    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT` for a second of Unix time in the years 0000-9999.
    static func text(secondsSince1970 seconds: Int) -> String {
        let (days, secondOfDay) = (seconds.floorDivided(by: 86_400), seconds.floorModulo(86_400))
        let day = CivilDay(daysSince1970: days)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(day.year)
        return "\(weekdays[days.floorModulo(7)]), \(two(day.day)) \(months[day.month - 1]) "
            + String(repeating: "0", count: max(0, 4 - year.count)) + year
            + " \(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }
}

extension Int {
    fileprivate func floorDivided(by divisor: Int) -> Int { (self - floorModulo(divisor)) / divisor }
    fileprivate func floorModulo(_ divisor: Int) -> Int { ((self % divisor) + divisor) % divisor }
}
