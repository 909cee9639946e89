/// A day of the proleptic Gregorian calendar from a count of days since 1970-01-01, by arithmetic alone (400-year
/// eras of 146,097 days), so that writing a timestamp needs no calendar, time zone or format style.
struct CivilDay {
    let year: Int
    let month: Int
    let day: Int

    init(daysSince1970 days: Int) {
        // Counted from 0000-03-01, so that the leap day is the last day of a year and February needs no special case.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }
}
