import CremaCivilTime
import Testing

@Suite struct CivilDayTests {
    @Test("a day count names its calendar day and back", arguments: [
        (0, 1970, 1, 1), (-1, 1969, 12, 31), (11_016, 2000, 2, 29), (11_017, 2000, 3, 1), (-25_508, 1900, 3, 1),
        (-25_509, 1900, 2, 28), (47_540, 2100, 2, 28), (47_541, 2100, 3, 1), (19_782, 2024, 2, 29),
        (2_932_896, 9999, 12, 31), (-719_468, 0, 3, 1), (-719_469, 0, 2, 29), (-141_714, 1582, 1, 1),
    ])
    func aDayCountNamesItsCalendarDayAndBack(_ days: Int, _ year: Int, _ month: Int, _ day: Int) {
        #expect(CivilDay(daysSince1970: days) == CivilDay(year: year, month: month, day: day))
        #expect(CivilDay(year: year, month: month, day: day).daysSince1970 == days)
    }

    /// Walking day by day from 1500 to 2500, every date follows the one before it by the calendar's own rules:
    /// month lengths, leap years every fourth year except centuries not divisible by 400.
    @Test("consecutive days follow the gregorian rules") func consecutiveDaysFollowTheGregorianRules() {
        func length(_ year: Int, _ month: Int) -> Int {
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        }
        var expected = CivilDay(year: 1500, month: 1, day: 1)
        var broken: [Int] = []
        for days in expected.daysSince1970...CivilDay(year: 2500, month: 12, day: 31).daysSince1970 {
            let civil = CivilDay(daysSince1970: days)
            if civil != expected || civil.daysSince1970 != days { broken.append(days) }
            expected = civil.day < length(civil.year, civil.month)
                ? CivilDay(year: civil.year, month: civil.month, day: civil.day + 1)
                : civil.month < 12 ? CivilDay(year: civil.year, month: civil.month + 1, day: 1) : CivilDay(year: civil.year + 1, month: 1, day: 1)
        }
        #expect(broken.count == 0, "first: \(broken.prefix(3))")
    }

    @Test("digits are written zero padded to their width") func digitsAreWrittenZeroPaddedToTheirWidth() {
        let text = String(unsafeUninitializedCapacity: 11) { buffer in
            buffer.putDigits(7, width: 4, at: 0)
            buffer[4] = UInt8(ascii: "|")
            buffer.putDigits(123_456, width: 6, at: 5)
            return 11
        }
        #expect(text == "0007|123456")
    }
}
