import Foundation

/// An ETA as people read it at `now`: whole minutes left, and the store's wall-clock time it falls on.
struct ETAReading: Sendable, Hashable {
    /// Minutes left, rounded up; 0 when the ETA is now or past ("any moment").
    var minutesLeft: Int
    /// The ETA rounded up to the minute, in the store's time zone, 24-hour.
    var hour: Int
    var minute: Int

    var isDue: Bool { minutesLeft <= 0 }
    /// Hours for long waits, rounded to the nearest hour (compact surfaces show less precise data).
    var roundedHours: Int { max(1, Int((Double(minutesLeft) / 60).rounded())) }

    init(eta: Date, now: Date, timeZone: TimeZone) {
        let seconds = eta.timeIntervalSince(now)
        minutesLeft = seconds <= 0 ? 0 : Int((seconds / 60).rounded(.up))
        let roundedUp = Date(timeIntervalSinceReferenceDate: (eta.timeIntervalSinceReferenceDate / 60).rounded(.up) * 60)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: roundedUp)
        hour = parts.hour ?? 0
        minute = parts.minute ?? 0
    }

    /// "10:05" on a 24-hour clock.
    var twentyFourHour: String { "\(hour):\(minute < 10 ? "0" : "")\(minute)" }
}
