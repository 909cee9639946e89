public import CremaPostgres
import CremaStore
import Foundation

/// A private, migrated database for one suite or test, created on the cluster that `scripts/test`
/// starts (`CREMA_TEST_DATABASE_URL`, a key=value conninfo). Without that variable the suite fails with
/// a message saying how to run it: Postgres-backed tests never skip silently.
public struct TestDatabase: Sendable {
    public let name: String
    public let conninfo: String
    public let pool: PostgresPool
    /// The admin conninfo of the cluster the database is on.
    let server: String
    /// The Citus workers the database is spread over (scripts/citus-test); nil on plain PostgreSQL.
    let citus: CitusTestCluster?

    init(name: String, conninfo: String, pool: PostgresPool, server: String, citus: CitusTestCluster? = nil) {
        self.name = name
        self.conninfo = conninfo
        self.pool = pool
        self.server = server
        self.citus = citus
    }

    public enum Failure: Error, CustomStringConvertible {
        case noServer
        public var description: String {
            "CREMA_TEST_DATABASE_URL is not set: run the tests with scripts/test, which starts a private PostgreSQL cluster"
        }
    }

    /// The admin conninfo of the test cluster, with a connect timeout of a minute rather than Crema's 5 s: while
    /// the suites start, dozens of CREATE DATABASE on two cores can keep a connection waiting longer than that.
    public static func serverConninfo() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["CREMA_TEST_DATABASE_URL"], !url.isEmpty else { throw Failure.noServer }
        return "\(url) connect_timeout=60"
    }

    /// A connection to the test cluster's admin database without the session's 30 s statement limit: on a loaded
    /// two-core machine, CREATE DATABASE queues behind the other suites' creates and drops for longer than that.
    public static func adminConnection(_ server: String? = nil) async throws -> PostgresConnection {
        let admin = try await PostgresConnection.connect(try server ?? serverConninfo())
        do {
            try await admin.simpleQuery("SET statement_timeout TO 0")
        } catch {
            await admin.close()
            throw error
        }
        return admin
    }

    /// Creates a database named after the caller (plus a random suffix), applies Crema's migrations
    /// unless `migrated` is false, and returns it with a small pool. `server`: the admin conninfo of another cluster
    /// than the shared one (a private cluster a test may reconfigure).
    public static func create(
        _ label: String = #function, migrated: Bool = true, poolSize: Int = 4, server: String? = nil
    ) async throws -> TestDatabase {
        let isShared = server == nil
        let server = try server ?? serverConninfo()
        let slug = label.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30)
        let name = "t_\(slug)_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try await adminConnection(server)
        try await admin.simpleQuery("CREATE DATABASE \(name)")
        await admin.close()
        let conninfo = "\(server) dbname=\(name)"
        let citus = isShared ? try CitusTestCluster.fromEnvironment() : nil
        try await citus?.prepare(database: name, coordinator: conninfo)
        let pool = PostgresPool(.init(conninfo: conninfo, maxConnections: poolSize, acquireTimeout: .seconds(10)))
        if migrated {
            let migrator = Migrator(migrations: try CremaMigrations.all())
            _ = try await pool.withConnection { connection in
                try await migrator.migrate(on: connection)
                // What `crema migrate` does next on a Citus coordinator.
                if citus != nil { _ = try await CitusDistribution().distribute(on: connection) }
            }
        }
        return TestDatabase(name: name, conninfo: conninfo, pool: pool, server: server, citus: citus)
    }

    /// Closes the pool and drops the database.
    public func drop() async {
        await pool.close()
        guard let admin = try? await Self.adminConnection(server) else { return }
        try? await admin.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        await admin.close()
        await citus?.drop(database: name)
    }

    /// Runs `body` with a fresh database and drops it afterwards, whether `body` throws or not.
    @discardableResult
    public static func with<T: Sendable>(
        _ label: String = #function, migrated: Bool = true, server: String? = nil, _ body: (TestDatabase) async throws -> T
    ) async throws -> T {
        let database = try await create(label, migrated: migrated, server: server)
        do {
            let value = try await body(database)
            await database.drop()
            return value
        } catch {
            await database.drop()
            throw error
        }
    }

    /// A single value from a query, for assertions on what the database holds.
    public func scalar<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type = T.self) async throws -> T {
        try await pool.withConnection { connection in
            let rows = try await connection.query(query)
            guard let row = rows.first else { throw PostgresError(.decoding, detail: "no rows") }
            return try row.decode(at: 0, as: T.self)
        }
    }
}
