import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

/// The driver sends a caller's statements in one flight and resumes it once with every answer.
@Suite(.timeLimit(.minutes(2))) struct PostgresPipelineTests {
    @Test("statements sent together answer in order in one round trip") func statementsSentTogetherAnswerInOrderInOneRoundTrip() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let before = connection.roundTrips
            let answers = try await connection.pipeline([
                "SELECT \(1)::int AS v", "SELECT generate_series(1, \(3)) AS v", "SELECT NULL::int AS v WHERE false",
            ])
            #expect(connection.roundTrips == before + 1)
            #expect(try answers.map { try $0.map { try $0.decode("v", as: Int.self) } } == [[1], [1, 2, 3], []])
            await connection.close()
        }
    }

    @Test("a failure inside a transaction stops the rest and leaves nothing") func aFailureInsideATransactionStopsTheRestAndLeavesNothing() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await $0.simpleQuery("CREATE TABLE t (v int PRIMARY KEY)") }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withTransaction { connection in
                    try await connection.pipeline(["INSERT INTO t VALUES (\(1))", "INSERT INTO t VALUES (\(1))", "INSERT INTO t VALUES (\(2))"])
                }
            }
            #expect(error?.sqlState == PostgresError.SQLState.uniqueViolation)
            #expect(try await db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        }
    }

    @Test("a transaction that commits with its last statements costs two round trips") func aTransactionThatCommitsWithItsLastStatementsCostsTwoRoundTrips() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await $0.simpleQuery("CREATE TABLE t (v int PRIMARY KEY)") }
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let trips = try await pool.withTransaction { connection in
                let start = connection.roundTrips
                // BEGIN travels with the read; COMMIT with the write.
                let count = try await connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self)
                try await connection.pipeline(["INSERT INTO t VALUES (\(count + 1))", "COMMIT"])
                #expect(!connection.isInTransaction)
                return connection.roundTrips - start
            }
            #expect(trips == 2)
            #expect(try await db.scalar("SELECT count(*) FROM t", as: Int.self) == 1)
            await pool.close()
        }
    }

    @Test("a transaction that never ran a statement sends nothing") func aTransactionThatNeverRanAStatementSendsNothing() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let trips = try await pool.withTransaction { connection in connection.roundTrips }
            let after = try await pool.withConnection { connection in connection.roundTrips }
            #expect(after == trips)
            await pool.close()
        }
    }

    @Test("a statement used again runs prepared on its connection") func aStatementUsedAgainRunsPreparedOnItsConnection() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            for value in 1...3 { try await connection.query("SELECT \(value)::int + 1 AS v") }
            let prepared = try await connection.query("SELECT statement FROM pg_prepared_statements WHERE statement = \("SELECT $1::int + 1 AS v")")
            #expect(prepared.count == 1)
            await connection.close()
        }
    }

    @Test("a prepared statement stale after a schema change is prepared afresh") func aPreparedStatementStaleAfterASchemaChangeIsPreparedAfresh() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            try await connection.simpleQuery("CREATE TABLE t (a int); INSERT INTO t VALUES (1)")
            #expect(try await connection.query("SELECT * FROM t")[0].columnNames == ["a"])
            try await connection.simpleQuery("ALTER TABLE t ADD COLUMN b int")
            // The server refuses the old plan once ("cached plan must not change result type"); the name is dropped.
            let stale = await #expect(throws: PostgresError.self) { try await connection.query("SELECT * FROM t") }
            #expect(stale?.sqlState == "0A000")
            #expect(try await connection.query("SELECT * FROM t")[0].columnNames == ["a", "b"])
            await connection.close()
        }
    }

    @Test("a value larger than the socket buffer is sent whole") func aValueLargerThanTheSocketBufferIsSentWhole() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let big = String(repeating: "crema ", count: 1_000_000)
            let length = try await connection.query("SELECT length(\(big)) AS n")[0].decode("n", as: Int.self)
            #expect(length == big.count)
            await connection.close()
        }
    }

    @Test("concurrent connections each get their own answers") func concurrentConnectionsEachGetTheirOwnAnswers() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // Twice as many workers as connections: under the whole suite on two cores a wait for a free one
            // outlasted the default 5 s, which this test is not about.
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 8, acquireTimeout: .seconds(60)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for round in 0..<50 {
                            let value = worker * 1000 + round
                            let answers = try await pool.withConnection { try await $0.pipeline(["SELECT \(value)::int AS v", "SELECT \(-value)::int AS v"]) }
                            #expect(try answers[0][0].decode("v", as: Int.self) == value)
                            #expect(try answers[1][0].decode("v", as: Int.self) == -value)
                        }
                    }
                }
                try await group.waitForAll()
            }
            await pool.close()
        }
    }

    @Test("a multi statement script still runs after pipelined statements") func aMultiStatementScriptStillRunsAfterPipelinedStatements() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            try await connection.query("SELECT 1")
            try await connection.simpleQuery("CREATE TABLE t (v int); INSERT INTO t VALUES (1), (2)")
            #expect(try await connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 2)
            await connection.close()
        }
    }

    @Test("the same statement twice in one flight is prepared once") func theSameStatementTwiceInOneFlightIsPreparedOnce() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let answers = try await connection.pipeline(["SELECT \(1)::int * 10 AS v", "SELECT \(2)::int * 10 AS v"])
            #expect(try answers.map { try $0[0].decode("v", as: Int.self) } == [10, 20])
            let prepared = try await connection.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = \("SELECT $1::int * 10 AS v")")
            #expect(try prepared[0].decode("n", as: Int.self) == 1)
            await connection.close()
        }
    }

    @Test("committing a transaction that failed is an error not a silent rollback") func committingATransactionThatFailedIsAnErrorNotASilentRollback() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await $0.simpleQuery("CREATE TABLE t (v int PRIMARY KEY)") }
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withTransaction { connection in
                    try await connection.query("INSERT INTO t VALUES (\(1))")
                    // The body swallows a failure and returns as if all went well.
                    _ = try? await connection.query("INSERT INTO t VALUES (\(1))")
                }
            }
            #expect(error?.sqlState == "25P02")
            #expect(try await db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        }
    }

    @Test("a statement with more parameters than the protocol carries is refused before sending") func aStatementWithMoreParametersThanTheProtocolCarriesIsRefusedBeforeSending() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let connection = try await PostgresConnection.connect(db.conninfo)
            let values = (1...65_536).map { String($0) as String? }
            let placeholders = (1...65_536).map { "$\($0)" }.joined(separator: ",")
            let error = await #expect(throws: PostgresError.self) {
                try await connection.query(PostgresQuery(unsafeSQL: "SELECT array_length(ARRAY[\(placeholders)]::int[], 1)", binds: values))
            }
            #expect(error?.code == .invalidParameter)
            // The connection is untouched and answers the next flight.
            #expect(try await connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
            await connection.close()
        }
    }
}
