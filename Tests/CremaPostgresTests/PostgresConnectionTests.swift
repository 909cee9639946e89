import CremaPostgres
import CremaTestSupport
import Foundation
import Testing

@Suite(.timeLimit(.minutes(2))) struct PostgresConnectionTests {
    @Test("every supported type round trips through bound parameters") func everySupportedTypeRoundTripsThroughBoundParameters() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let id = UUID()
            let at = Date(timeIntervalSince1970: 1_795_000_000.123456)
            let json = PostgresJSON(text: #"{"a": [1, "ü"]}"#)
            let text = "O'Brien — 抹茶ラテ ☕️ \"quoted\""
            let row = try await db.pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(text)::text AS t, \(42)::int AS i, \(Int64.max)::bigint AS big, \(true)::bool AS b,
                           \(at)::timestamptz AS ts, \(id)::uuid AS u, \(json)::jsonb AS j, \(String?.none)::text AS n,
                           \(2.5)::float8 AS d
                    """)[0]
            }
            #expect(try row.decode("t", as: String.self) == text)
            #expect(try row.decode("i", as: Int.self) == 42)
            #expect(try row.decode("big", as: Int64.self) == Int64.max)
            #expect(try row.decode("b", as: Bool.self) == true)
            #expect(try row.decode("ts", as: Date.self) == at)
            #expect(try row.decode("u", as: UUID.self) == id)
            #expect(try row.decode("j", as: PostgresJSON.self).decode([String: [JSONAny]].self)["a"]?.count == 2)
            #expect(try row.decode("n", as: String?.self) == nil)
            #expect(try row.decode("d", as: Double.self) == 2.5)
        }
    }

    @Test("an injection attempt stays a value") func anInjectionAttemptStaysAValue() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let hostile = "x'); DROP TABLE pg_class; --"
            let rows = try await db.pool.withConnection { try await $0.query("SELECT \(hostile) AS v, 1 AS one") }
            #expect(try rows[0].decode("v", as: String.self) == hostile)
        }
    }

    @Test("a server error carries its SQL state but not the value in its description") func aServerErrorCarriesItsSQLStateButNotTheValueInItsDescription() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let error = try await #require(throws: PostgresError.self) {
                try await db.pool.withConnection { connection in
                    try await connection.simpleQuery("CREATE TABLE t (k text PRIMARY KEY)")
                    try await connection.query("INSERT INTO t VALUES (\("secret-token-123"))")
                    try await connection.query("INSERT INTO t VALUES (\("secret-token-123"))")
                }
            }
            #expect(error.code == .server)
            #expect(error.sqlState == PostgresError.SQLState.uniqueViolation)
            #expect(!error.description.contains("secret-token-123"))
            #expect(String(reflecting: error).contains("duplicate key"))
        }
    }

    @Test("a value with NULIs refused rather than truncated") func aValueWithNULIsRefusedRatherThanTruncated() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { try await $0.query("SELECT \("market-st\u{0}x")::text") }
            }
            #expect(error?.code == .invalidParameter)
        }
    }

    @Test("sessions run with time limits") func sessionsRunWithTimeLimits() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let timeout = try await db.scalar("SHOW statement_timeout", as: String.self)
            let lock = try await db.scalar("SHOW lock_timeout", as: String.self)
            #expect(timeout == "30s")
            #expect(lock == "10s")
        }
    }

    @Test("decoding the wrong type is a decoding error") func decodingTheWrongTypeIsADecodingError() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let row = try await db.pool.withConnection { try await $0.query("SELECT 'abc' AS v, NULL::int AS n")[0] }
            #expect(throws: PostgresError.self) { try row.decode("v", as: Int.self) }
            #expect(throws: PostgresError.self) { try row.decode("n", as: Int.self) }
            #expect(throws: PostgresError.self) { try row.decode("missing", as: String.self) }
        }
    }

    @Test("a transaction that throws leaves nothing behind") func aTransactionThatThrowsLeavesNothingBehind() async throws {
        try await TestDatabase.with(migrated: false) { db in
            _ = try await db.pool.withConnection { try await $0.simpleQuery("CREATE TABLE t (v int)") }
            struct Abort: Error {}
            await #expect(throws: Abort.self) {
                try await db.pool.withTransaction { connection in
                    try await connection.query("INSERT INTO t VALUES (\(1))")
                    throw Abort()
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
            _ = try await db.pool.withTransaction { try await $0.query("INSERT INTO t VALUES (\(2))") }
            #expect(try await db.scalar("SELECT count(*) FROM t", as: Int.self) == 1)
        }
    }

    @Test("a transaction runs at the requested isolation level", arguments: [PostgresIsolation.readCommitted, .repeatableRead, .serializable])
    func aTransactionRunsAtTheRequestedIsolationLevel(_ isolation: PostgresIsolation) async throws {
        try await TestDatabase.with(migrated: false) { db in
            let level = try await db.pool.withTransaction(isolation: isolation) { connection in
                try await connection.query("SHOW transaction_isolation")[0].decode(at: 0, as: String.self)
            }
            #expect(level.uppercased() == isolation.rawValue)
        }
    }

    @Test("cancelling the task cancels the running statement") func cancellingTheTaskCancelsTheRunningStatement() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let sleeper = Task { try await db.pool.withConnection { try await $0.query("SELECT pg_sleep(60)") } }
            // Wait until the statement is running on the server, then cancel the task.
            while try await db.scalar("SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)'", as: Int.self) == 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            sleeper.cancel()
            let error = await #expect(throws: PostgresError.self) { try await sleeper.value }
            #expect(error?.code == .canceled)
            #expect(error?.sqlState == PostgresError.SQLState.queryCanceled)
            // The connection is usable again afterwards.
            #expect(try await db.scalar("SELECT 7", as: Int.self) == 7)
        }
    }

    @Test("a write refused as read-only is unavailable, and the pool reconnects that connection, so the next write goes through")
    func aReadOnlyServerIsLeftAtTheNextLease() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // One connection, so the next lease is the same one: after a failover it would lead to the demoted primary.
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            try await pool.withConnection { connection in
                try await connection.query("CREATE TABLE demo (id int)")
                // What a demoted primary answers a write with, for this session only.
                try await connection.query("SET default_transaction_read_only = on")
            }
            let refused = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try await $0.query("INSERT INTO demo VALUES (1)") }
            }
            #expect(refused?.sqlState == "25006")
            #expect(refused?.isUnavailable == true)
            // The next lease reconnects rather than handing the read-only session out again.
            try await pool.withConnection { connection in
                #expect(!connection.refusedWrites)
                try await connection.query("INSERT INTO demo VALUES (2)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM demo", as: Int.self) == 1)
            await pool.close()
        }
    }

    @Test("a pool at capacity gives up after the acquire timeout") func aPoolAtCapacityGivesUpAfterTheAcquireTimeout() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1, acquireTimeout: .milliseconds(200)))
            let (held, release) = AsyncStream<Void>.makeStream()
            let (leased, lease) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await pool.withConnection { _ in
                    lease.finish()
                    for await _ in held {}
                }
            }
            // The only connection is taken once the holder is inside it.
            for await _ in leased {}
            #expect(await pool.usage.leased == 1)
            let error = await #expect(throws: PostgresError.self) {
                try await pool.withConnection { try await $0.query("SELECT 1") }
            }
            #expect(error?.code == .acquireTimeout)
            #expect(error?.isUnavailable == true)
            release.finish()
            try await holder.value
            #expect(try await pool.withConnection { try await $0.query("SELECT 1 AS one")[0].decode("one", as: Int.self) } == 1)
            await pool.close()
        }
    }

    @Test("a pool at capacity serves a waiting tenant before the busy tenant's next waiter")
    func aPoolAtCapacityServesTenantsInTurn() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let (held, release) = AsyncStream<Void>.makeStream()
            let (leased, lease) = AsyncStream<Void>.makeStream()
            let busy = PostgresPoolTenant("busy")
            let holder = Task {
                try await pool.withConnection(for: busy) { _ in
                    lease.finish()
                    for await _ in held {}
                }
            }
            for await _ in leased {}
            let (served, serve) = AsyncStream<String>.makeStream()
            var waiters: [Task<Void, any Error>] = []
            // Two of the busy tenant's commands queue first, then one of another tenant's; each is known to wait before
            // the next is started.
            for (n, (name, tenant)) in [("busy 1", busy), ("busy 2", busy), ("quiet", PostgresPoolTenant("quiet"))].enumerated() {
                waiters.append(Task {
                    try await pool.withTransaction(for: tenant) { connection in
                        _ = try await connection.query("SELECT 1")
                        serve.yield(name)
                    }
                })
                while await pool.usage.waiting < n + 1 { await Task.yield() }
            }
            release.finish()
            try await holder.value
            for waiter in waiters { try await waiter.value }
            serve.finish()
            #expect(await served.reduce(into: []) { $0.append($1) } == ["busy 1", "quiet", "busy 2"])
            await pool.close()
        }
    }

    @Test("a connection killed by the server is repaired on the next lease") func aConnectionKilledByTheServerIsRepairedOnTheNextLease() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let pid = try await pool.withConnection { try await $0.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self) }
            _ = try await db.pool.withConnection { try await $0.query("SELECT pg_terminate_backend(\(pid), 10000)") }
            let newPID = try await pool.withConnection { try await $0.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self) }
            #expect(newPID != pid)
            await pool.close()
        }
    }

    @Test("a statement whose server shuts its backend down (57P01) is unavailable, and the next lease reconnects")
    func aStatementCutByAnAdminShutdownIsUnavailableAndTheNextLeaseReconnects() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // What a fast shutdown or a pg_auto_failover demotion does to a statement in flight: FATAL 57P01, then EOF.
            let pool = PostgresPool(.init(conninfo: db.conninfo, maxConnections: 1))
            let pid = try await pool.withConnection { try await $0.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self) }
            let sleeper = Task { try await pool.withConnection { try await $0.query("SELECT pg_sleep(60)") } }
            while try await db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND query = 'SELECT pg_sleep(60)'", as: Int.self) == 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = try await db.pool.withConnection { try await $0.query("SELECT pg_terminate_backend(\(pid), 10000)") }
            let error = await #expect(throws: PostgresError.self) { try await sleeper.value }
            #expect(error?.isUnavailable == true, "a client would get \(String(describing: error)) instead of a 503")
            #expect(error?.sqlState == "57P01" || error?.code == .connectionFailed)
            let newPID = try await pool.withConnection { try await $0.query("SELECT pg_backend_pid() AS pid")[0].decode("pid", as: Int.self) }
            #expect(newPID != pid)
            await pool.close()
        }
    }

    @Test("Citus's words for a worker connection lost under a transaction, at its commit included, count as unavailable, and no other XX000 does")
    func citusEssentialConnectionFailureCountsAsUnavailable() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // The coordinator's words when a worker died under a transaction (PostgresError.citusWorkerConnectionFailures), raised by the
            // server with the same SQLSTATE, so the error arrives through libpq as it does from Citus.
            func raised(_ message: String) async -> PostgresError? {
                await #expect(throws: PostgresError.self) {
                    try await db.pool.withConnection {
                        try await $0.simpleQuery("DO $$ BEGIN RAISE EXCEPTION '\(message)' USING ERRCODE = 'XX000'; END $$")
                    }
                }
            }
            for message in [
                "failure on connection marked as essential: 127.0.0.1:40511",
                "could not commit transaction for shard 102318 on at least one active node",
                "server closed the connection unexpectedly",
                "terminating connection due to unexpected postmaster exit",
            ] {
                let worker = await raised(message)
                #expect(worker?.sqlState == "XX000")
                #expect(worker?.isUnavailable == true, "a client would get \(String(describing: worker)) instead of a 503")
            }
            let other = await raised("cache lookup failed for relation 16384")
            #expect(other?.sqlState == "XX000")
            #expect(other?.isUnavailable == false)
        }
    }

    @Test("an unreachable server is a connection failure that counts as unavailable") func anUnreachableServerIsAConnectionFailureThatCountsAsUnavailable() async throws {
        let error = await #expect(throws: PostgresError.self) {
            try await PostgresConnection.connect("host=127.0.0.1 port=1 connect_timeout=2 user=nobody dbname=none")
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.isUnavailable == true)
    }

    @Test("a failed connection names host port database user and reason but never the password") func aFailedConnectionNamesHostPortDatabaseUserAndReasonButNeverThePassword() async throws {
        let error = try await #require(throws: PostgresError.self) {
            try await PostgresConnection.connect("host=127.0.0.1 port=1 connect_timeout=2 user=nobody dbname=nowhere password=hunter2-secret")
        }
        #expect(error.code == .connectionFailed)
        for part in ["connection_failed", "host 127.0.0.1", "port 1", "database nowhere", "user nobody", "Connection refused"] {
            #expect(error.description.contains(part), "\(part) missing from \(error)")
        }
        #expect(!error.description.contains("\n"))
        #expect(!error.description.contains("hunter2-secret"))
        #expect(!String(reflecting: error).contains("hunter2-secret"))
    }

    @Test("a conninfo libpq cannot read says why without quoting its password") func aConninfoLibpqCannotReadSaysWhyWithoutQuotingItsPassword() async throws {
        // libpq quotes the whole URI in this message, the password with it.
        let error = try await #require(throws: PostgresError.self) {
            try await PostgresConnection.connect("postgresql://nobody:hunter2-secret@[::1/nowhere")
        }
        #expect(error.code == .connectionFailed)
        #expect(error.description.contains("IPv6"))
        #expect(!error.description.contains("hunter2-secret"))
        #expect(!String(reflecting: error).contains("hunter2-secret"))
    }

    @Test("a URI conninfo is accepted") func aURIConninfoIsAccepted() async throws {
        try await TestDatabase.with(migrated: false) { db in
            // The test cluster listens on a socket directory; a URI can name it with the host parameter.
            let host = try #require(db.conninfo.split(separator: " ").first { $0.hasPrefix("host=") }).dropFirst(5)
                .trimmingCharacters(in: CharacterSet(charactersIn: "'"))
            let uri = "postgresql:///\(db.name)?host=\(host)&user=crema&port=5432"
            let connection = try await PostgresConnection.connect(uri)
            #expect(try await connection.query("SELECT current_database() AS d")[0].decode("d", as: String.self) == db.name)
            await connection.close()
        }
    }
}

/// Any JSON value, for checking decoded JSON shapes in tests.
struct JSONAny: Decodable {
    init(from decoder: any Decoder) throws {}
}

@Suite struct PostgresConstraintErrorTests {
    @Test("a broken constraint is logged by SQLSTATE and constraint name, never by the values the server quotes")
    func aConstraintViolationNamesTheConstraintNotTheRow() async throws {
        try await TestDatabase.with(migrated: false) { db in
            let error = await #expect(throws: PostgresError.self) {
                try await db.pool.withConnection { connection in
                    _ = try await connection.query("CREATE TABLE people (name text CONSTRAINT people_name_unique UNIQUE)")
                    _ = try await connection.query("INSERT INTO people VALUES ('Ana Secret')")
                    _ = try await connection.query("INSERT INTO people VALUES ('Ana Secret')")
                }
            }
            #expect(error?.sqlState == "23505")
            #expect(error?.constraint == "people_name_unique")
            #expect(error?.description.contains("people_name_unique") == true)
            #expect(error?.description.contains("Ana Secret") == false)
        }
    }
}
