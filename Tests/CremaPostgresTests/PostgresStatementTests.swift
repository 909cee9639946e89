@testable import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

/// A shape as the store writes one: an outer statement embedding fragments and a joined list whose length is the key.
private struct RowsShape: PostgresStatementShape {
    static let statements = PostgresStatementTable<Int>(limit: 8)
    var tenant: String
    var rows: [(id: Int, name: String?)]

    var key: Int { rows.count }

    func sql<SQL: PostgresSQL>() -> SQL {
        let list: SQL =
            rows.isEmpty
            ? "SELECT NULL::int, NULL::text WHERE false"
            : "VALUES \(SQL(joining: rows.map { row -> SQL in "(\(row.id)::int, \(row.name)::text)" }, separator: ", "))"
        return """
            WITH x AS (\(filter() as SQL)), y AS (
                SELECT * FROM (\(list)) AS r(id, name)
            )
            SELECT \(unescaped: "count(*)") FROM y WHERE \(tenant) <> ''
            """
    }

    private func filter<SQL: PostgresSQL>() -> SQL { "SELECT \(tenant)::text AS tenant" }
}

/// A shape whose table keeps one statement, to see what happens past the limit.
private struct TinyTableShape: PostgresStatementShape {
    static let statements = PostgresStatementTable<Int>(limit: 1)
    var width: Int

    var key: Int { width }

    func sql<SQL: PostgresSQL>() -> SQL { "SELECT \(SQL(joining: (0..<width).map { n -> SQL in "\(n)::int" }, separator: ", "))" }
}

@Suite struct PostgresStatementTests {
    @Test("a kept shape's text is the text the query interpolation builds, for every number of rows")
    func aKeptShapesTextIsTheTextTheQueryInterpolationBuilds() {
        for count in 0..<4 {
            let first = RowsShape(tenant: "t-\(count)", rows: (0..<count).map { ($0, "n\($0)") })
            let second = RowsShape(tenant: "u-\(count)", rows: (0..<count).map { ($0 + 10, $0 == 1 ? nil : "m\($0)") })
            for shape in [first, second] {
                let built: PostgresQuery = shape.sql()
                let kept = shape.query
                #expect(kept.sql == built.sql, "\(count) rows")
                #expect(kept.binds == built.binds, "\(count) rows")
                #expect(kept.statement != nil, "kept after the first call")
            }
            #expect(first.query.statement?.id == second.query.statement?.id, "one statement per shape")
        }
    }

    @Test("the values of a shape are numbered in the order its placeholders are, for two rows")
    func theValuesOfAShapeAreNumberedInTheOrderItsPlaceholdersAre() {
        let query = RowsShape(tenant: "acme", rows: [(7, "a"), (8, nil)]).query
        #expect(
            query.sql == """
                WITH x AS (SELECT $1::text AS tenant), y AS (
                    SELECT * FROM (VALUES ($2::int, $3::text), ($4::int, $5::text)) AS r(id, name)
                )
                SELECT count(*) FROM y WHERE $6 <> ''
                """)
        #expect(query.binds == ["acme", "7", "a", "8", nil, "acme"])
        let values: PostgresBinds = RowsShape(tenant: "acme", rows: [(7, "a"), (8, nil)]).sql()
        #expect(values.values == query.binds)
    }

    @Test("shapes with different keys get different statements, and a full table sends the rest as text")
    func aFullTableSendsTheRestAsText() {
        let one = TinyTableShape(width: 1).query
        let two = TinyTableShape(width: 2).query
        #expect(one.statement != nil)
        #expect(two.statement == nil, "the table keeps one statement")
        #expect(two.sql == "SELECT $1::int, $2::int")
        #expect(two.binds == ["0", "1"])
        #expect(TinyTableShape.statements.count == 1)
        #expect(TinyTableShape(width: 1).query.statement?.id == one.statement?.id)
    }

    @Test("every statement has an identity of its own, even with the same text")
    func everyStatementHasAnIdentityOfItsOwn() {
        let a = PostgresStatement(sql: "SELECT 1")
        let b = PostgresStatement(sql: "SELECT 1")
        #expect(a.id != b.id)
        #expect(a.query.preparedKey != b.query.preparedKey)
        #expect(PostgresQuery(unsafeSQL: "SELECT 1").preparedKey == .text("SELECT 1"))
    }

    @Test("a kept statement is prepared once per connection and runs with each call's values")
    func aKeptStatementIsPreparedOncePerConnection() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let statement = PostgresStatement(sql: "SELECT $1::int + 1 AS v")
            var answers: [Int] = []
            for n in 1...3 {
                let rows = try await connection.query(statement.bind("\(n)"))
                answers.append(try rows[0].decode("v", as: Int.self))
            }
            #expect(answers == [2, 3, 4])
            let prepared = try await connection.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = \(statement.sql)")
            #expect(try prepared[0].decode("n", as: Int.self) == 1)
            await connection.close()
        }
    }

    @Test("a kept statement whose text holds a NUL is refused before it is sent")
    func aKeptStatementWhoseTextHoldsANULIsRefused() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let before = connection.roundTrips
            let error = await #expect(throws: PostgresError.self) {
                try await connection.query(PostgresStatement(sql: "SELECT 1\u{0}; DROP TABLE x").query)
            }
            #expect(error?.code == .invalidParameter)
            #expect(connection.roundTrips == before)
            await connection.close()
        }
    }
}
