public import Foundation

/// RFC 3339 text in UTC with exactly three fractional digits, rounded to the nearest millisecond: the one way Crema
/// writes an instant as text, for the API (`WireCoding.rfc3339`) and for what the store keeps as text (event data).
/// Written by hand because the format style truncates, so a date read back from its own text (…19.790 is 19.78999…
/// as a double) would print a millisecond earlier, half of all milliseconds; and because the format style was 1.5 %
/// of `crema serve`'s CPU under ingest (docs/benchmarks.md). Years before 1583 or after 9999 (never an order's) go
/// through the format style, which writes the Julian calendar before the Gregorian reform, so that no timestamp's
/// text changed with the arithmetic.
public enum RFC3339 {
    public static func text(_ date: Date) -> String {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard abs(millis) < 253_402_300_800_000 else { return formatted(millis: millis) }
        let (seconds, fraction) = floorDivision(Int(millis), 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let day = CivilDay(daysSince1970: days)
        guard (1583...9999).contains(day.year) else { return formatted(millis: millis) }
        return day.timestampText(secondOfDay: secondOfDay, fraction: fraction, fractionDigits: 3, separator: "T", suffix: "Z")
    }

    /// The instant RFC 3339 text names, with or without fractional seconds; nil when it is not such a date-time. The one
    /// reading of a timestamp a caller sends (`WireCoding.parseRFC3339`, an announcement's `until`).
    public static func date(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// The format style's rendering, for the years the arithmetic above leaves out.
    private static func formatted(millis: Double) -> String {
        let seconds = (millis / 1000).rounded(.down)
        let fraction = Int(millis - seconds * 1000)
        let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
        return whole.dropLast() + "." + String(repeating: "0", count: fraction < 10 ? 2 : fraction < 100 ? 1 : 0) + String(fraction) + "Z"
    }

    /// Quotient rounded down and a remainder that is never negative, for instants before 1970.
    private static func floorDivision(_ value: Int, _ divisor: Int) -> (quotient: Int, remainder: Int) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
