@testable import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

@Suite struct PostgresQueryTests {
    @Test("interpolated values become numbered parameters") func interpolatedValuesBecomeNumberedParameters() {
        let query: PostgresQuery = "SELECT * FROM t WHERE a = \("x") AND b = \(2)"
        #expect(query.sql == "SELECT * FROM t WHERE a = $1 AND b = $2")
        #expect(query.binds == ["x", "2"])
    }

    @Test("an embedded query has its placeholders renumbered") func anEmbeddedQueryHasItsPlaceholdersRenumbered() {
        let inner: PostgresQuery = "UPDATE k SET v = \("a") WHERE id = \(10)"
        let outer: PostgresQuery = "WITH x AS (INSERT INTO t VALUES (\(1))), y AS (\(inner)) SELECT \(true)"
        #expect(outer.sql == "WITH x AS (INSERT INTO t VALUES ($1)), y AS (UPDATE k SET v = $2 WHERE id = $3) SELECT $4")
        #expect(outer.binds == ["1", "a", "10", "t"])
    }

    @Test("renumbering keeps everything but placeholders byte for byte") func renumberingKeepsEverythingButPlaceholdersByteForByte() {
        let inner: PostgresQuery = "SELECT '€ $$ $x', \(1), \(2), \(3), \(4), \(5), \(6), \(7), \(8), \(9), \(10) -- $"
        let outer: PostgresQuery = "WITH a AS (SELECT \("é"), \(0), \(0)) \(inner)"
        #expect(outer.sql == "WITH a AS (SELECT $1, $2, $3) SELECT '€ $$ $x', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 -- $")
        #expect(outer.binds.count == 13)
        #expect(outer.binds.last == "10")
    }

    @Test("a statement or value with ANULIs found") func aStatementOrValueWithANULIsFound() {
        #expect(PostgresConnection.containsNUL("a\u{0}b"))
        #expect(!PostgresConnection.containsNUL("caf\u{e9} \u{1F600}"))
        #expect(!PostgresConnection.containsNUL(""))
        let long = String(repeating: "{\"name\":\"Oat latte\"}", count: 200)
        #expect(!PostgresConnection.containsNUL(long))
        for at in [0, 1, 31, 32, 33, long.utf8.count] {
            var bytes = Array(long.utf8)
            bytes.insert(0, at: at)
            #expect(PostgresConnection.containsNUL(String(decoding: bytes, as: UTF8.self)), "NUL at \(at)")
        }
    }

    @Test("nil binds as null") func nilBindsAsNull() {
        let query: PostgresQuery = "SELECT \(String?.none)"
        #expect(query.binds == [nil])
    }

    @Test("timestamps round trip with microsecond precision", arguments: [0.0, 1_795_000_000.123456, -86_400.5, 4_102_444_800.999999])
    func timestampsRoundTripWithMicrosecondPrecision(_ seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let parsed = try #require(PostgresTimestamp.parse(PostgresTimestamp.format(date)))
        #expect(abs(parsed.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    /// The text the driver sends is the day Foundation's Gregorian calendar names in UTC, for seeded instants from 1583
    /// (before it, Foundation's calendar is Julian) to 9999, with the microseconds rounded as before.
    @Test("timestamp text names the same day and time as foundations calendar") func timestampTextNamesTheSameDayAndTimeAsFoundationsCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SeededGenerator(seed: 1583)
        var differing: [String] = []
        for _ in 0..<5_000 {
            let seconds = Double(generator.next() % 265_000_000_000) - 12_212_553_600 + Double(generator.next() % 1_000_000) / 1_000_000
            let date = Date(timeIntervalSince1970: seconds)
            let text = PostgresTimestamp.format(date)
            let whole = Date(timeIntervalSince1970: ((seconds * 1_000_000).rounded() / 1_000_000).rounded(.down))
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
            let expected = String(format: "%04d-%02d-%02d %02d:%02d:%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
            if !text.hasPrefix(expected + ".") || !text.hasSuffix("+00") || text.utf8.count != 29 { differing.append("\(seconds): \(text) vs \(expected)") }
        }
        #expect(differing.count == 0, "first: \(differing.prefix(3))")
    }

    @Test("timestamps with offsets and short fractions parse") func timestampsWithOffsetsAndShortFractionsParse() throws {
        let utc = try #require(PostgresTimestamp.parse("2026-11-22 10:05:00.5+00"))
        #expect(PostgresTimestamp.parse("2026-11-22 12:05:00.5+02") == utc)
        #expect(PostgresTimestamp.parse("2026-11-22T10:05:00.500000Z") == utc)
        #expect(PostgresTimestamp.format(utc) == "2026-11-22 10:05:00.500000+00")
        #expect(PostgresTimestamp.parse("2026-11-22 10:05") == nil)
        #expect(PostgresTimestamp.parse("2026-11-22 10:05:00+00 junk") == nil)
    }
}
