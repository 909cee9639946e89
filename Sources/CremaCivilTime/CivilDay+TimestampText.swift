extension CivilDay {
    /// `YYYY-MM-DD`, `separator`, `HH:MM:SS.`, `fraction` in `fractionDigits` digits, then `suffix`: the one shape of
    /// both the API's RFC 3339 text (`T`, milliseconds, `Z`) and the driver's PostgreSQL timestamps (space,
    /// microseconds, `+00`), written into the string's buffer rather than built from padded pieces.
    /// - Precondition: a year of at most four digits, not negative; `secondOfDay` below 86,400.
    public func timestampText(
        secondOfDay: Int, fraction: Int, fractionDigits: Int, separator: Unicode.Scalar, suffix: StaticString
    ) -> String {
        precondition((0...9999).contains(year) && (0..<86_400).contains(secondOfDay), "outside what the text can hold")
        return String(unsafeUninitializedCapacity: 20 + fractionDigits + suffix.utf8CodeUnitCount) { text in
            var at = 0
            func digits(_ value: Int, _ width: Int) {
                text.putDigits(value, width: width, at: at)
                at += width
            }
            func byte(_ value: UInt8) {
                text[at] = value
                at += 1
            }
            digits(year, 4); byte(UInt8(ascii: "-")); digits(month, 2); byte(UInt8(ascii: "-")); digits(day, 2)
            byte(UInt8(ascii: separator))
            digits(secondOfDay / 3600, 2); byte(UInt8(ascii: ":")); digits(secondOfDay / 60 % 60, 2); byte(UInt8(ascii: ":"))
            digits(secondOfDay % 60, 2); byte(UInt8(ascii: ".")); digits(fraction, fractionDigits)
            suffix.withUTF8Buffer { for value in $0 { byte(value) } }
            return at
        }
    }
}
