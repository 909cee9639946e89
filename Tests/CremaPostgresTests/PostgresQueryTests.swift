@testable import CremaPostgres
import Foundation
import Testing

@Suite struct PostgresQueryTests {
    @Test func interpolatedValuesBecomeNumberedParameters() {
        let query: PostgresQuery = "SELECT * FROM t WHERE a = \("x") AND b = \(2)"
        #expect(query.sql == "SELECT * FROM t WHERE a = $1 AND b = $2")
        #expect(query.binds == ["x", "2"])
    }

    @Test func anEmbeddedQueryHasItsPlaceholdersRenumbered() {
        let inner: PostgresQuery = "UPDATE k SET v = \("a") WHERE id = \(10)"
        let outer: PostgresQuery = "WITH x AS (INSERT INTO t VALUES (\(1))), y AS (\(inner)) SELECT \(true)"
        #expect(outer.sql == "WITH x AS (INSERT INTO t VALUES ($1)), y AS (UPDATE k SET v = $2 WHERE id = $3) SELECT $4")
        #expect(outer.binds == ["1", "a", "10", "t"])
    }

    @Test func renumberingKeepsEverythingButPlaceholdersByteForByte() {
        let inner: PostgresQuery = "SELECT '€ $$ $x', \(1), \(2), \(3), \(4), \(5), \(6), \(7), \(8), \(9), \(10) -- $"
        let outer: PostgresQuery = "WITH a AS (SELECT \("é"), \(0), \(0)) \(inner)"
        #expect(outer.sql == "WITH a AS (SELECT $1, $2, $3) SELECT '€ $$ $x', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 -- $")
        #expect(outer.binds.count == 13)
        #expect(outer.binds.last == "10")
    }

    @Test func aStatementOrValueWithANULIsFound() {
        #expect(PostgresConnection.containsNUL("a\u{0}b"))
        #expect(!PostgresConnection.containsNUL("caf\u{e9} \u{1F600}"))
        #expect(!PostgresConnection.containsNUL(""))
    }

    @Test func nilBindsAsNull() {
        let query: PostgresQuery = "SELECT \(String?.none)"
        #expect(query.binds == [nil])
    }

    @Test(arguments: [0.0, 1_795_000_000.123456, -86_400.5, 4_102_444_800.999999])
    func timestampsRoundTripWithMicrosecondPrecision(_ seconds: Double) throws {
        let date = Date(timeIntervalSince1970: seconds)
        let parsed = try #require(PostgresTimestamp.parse(PostgresTimestamp.format(date)))
        #expect(abs(parsed.timeIntervalSince1970 - seconds) < 0.000_001)
    }

    @Test func timestampsWithOffsetsAndShortFractionsParse() throws {
        let utc = try #require(PostgresTimestamp.parse("2026-11-22 10:05:00.5+00"))
        #expect(PostgresTimestamp.parse("2026-11-22 12:05:00.5+02") == utc)
        #expect(PostgresTimestamp.parse("2026-11-22T10:05:00.500000Z") == utc)
        #expect(PostgresTimestamp.format(utc) == "2026-11-22 10:05:00.500000+00")
        #expect(PostgresTimestamp.parse("2026-11-22 10:05") == nil)
        #expect(PostgresTimestamp.parse("2026-11-22 10:05:00+00 junk") == nil)
    }
}
