import CremaCivilTime
public import Foundation

/// Converts between `Date` and PostgreSQL's ISO timestamp text with microsecond precision, without
/// `DateFormatter` (slow and locale-sensitive). Connections run with `TimeZone=UTC`, `DateStyle=ISO`.
public enum PostgresTimestamp {
    /// `2026-11-22 10:05:00.123456+00`
    public static func format(_ date: Date) -> String {
        // Clamped to PostgreSQL's range so an absurd Date cannot trap; the server then refuses it cleanly.
        let raw = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let micros = raw.isFinite ? Int64(max(-9.2e18, min(9.2e18, raw))) : 0
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        let civil = CivilDay(daysSince1970: Int(days))
        guard (0...9999).contains(civil.year) else {
            // Beyond four digits (or before year 0, which the server refuses in this form): the slow way.
            let time = (Int(secondOfDay) / 3600, Int(secondOfDay) / 60 % 60, Int(secondOfDay) % 60)
            func pad(_ value: Int, _ width: Int) -> String {
                let digits = String(value)
                return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
            }
            return "\(pad(civil.year, 4))-\(pad(civil.month, 2))-\(pad(civil.day, 2)) \(pad(time.0, 2)):\(pad(time.1, 2)):\(pad(time.2, 2)).\(pad(Int(fraction), 6))+00"
        }
        return civil.timestampText(secondOfDay: Int(secondOfDay), fraction: Int(fraction), fractionDigits: 6, separator: " ", suffix: "+00")
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]` (also accepts `T` as the separator).
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= b.count else { return nil }
            var value: Int64 = 0
            for i in start..<(start + count) {
                guard (48...57).contains(b[i]) else { return nil }
                value = value * 10 + Int64(b[i] - 48)
            }
            return value
        }
        guard b.count >= 19, let y = number(0, 4), b[4] == 45, let mo = number(5, 2), b[7] == 45,
            let d = number(8, 2), b[10] == 32 || b[10] == 84, let h = number(11, 2), b[13] == 58,
            let mi = number(14, 2), b[16] == 58, let s = number(17, 2)
        else { return nil }
        var i = 19
        var micros: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, (48...57).contains(b[i]) {
                if digits < 6 { micros = micros * 10 + Int64(b[i] - 48) }
                digits += 1
                i += 1
            }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offset: Int64 = 0
        if i < b.count, b[i] == 43 || b[i] == 45 {
            let sign: Int64 = b[i] == 45 ? -1 : 1
            guard let oh = number(i + 1, 2) else { return nil }
            var total = oh * 3600
            i += 3
            if i < b.count, b[i] == 58, let om = number(i + 1, 2) {
                total += om * 60
                i += 3
                if i < b.count, b[i] == 58, let os = number(i + 1, 2) {
                    total += os
                    i += 3
                }
            }
            offset = sign * total
        } else if i < b.count, b[i] == 90 {
            i += 1
        }
        guard i == b.count else { return nil }
        let seconds = Int64(CivilDay(year: Int(y), month: Int(mo), day: Int(d)).daysSince1970) * 86_400 + h * 3600 + mi * 60 + s - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }
}
