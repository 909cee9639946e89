public import CremaPostgres

/// What the operational routes say of the database (`/health/ready`, the pool gauge of `/metrics`), read here so the
/// HTTP server needs neither the pool nor the migrator: whether the schema is current, and how the pool is used.
public struct DatabaseHealth: Sendable {
    let pool: PostgresPool
    let migrator: Migrator

    public init(pool: PostgresPool, migrator: Migrator) {
        self.pool = pool
        self.migrator = migrator
    }

    /// The database as `/health/ready` reports it.
    public struct Readiness: Sendable, Hashable {
        /// The database answered and has every migration this build needs.
        public var isReady: Bool
        /// `ok`, `unreachable`, `unavailable`, or a migration error's code.
        public var database: String
        /// Migration numbers applied and still pending; both empty when nothing could be read.
        public var applied: [Int]
        public var pending: [Int]
    }

    public func readiness() async -> Readiness {
        do {
            let status = try await pool.withConnection { connection in try await migrator.status(on: connection) }
            return Readiness(isReady: status.isCurrent, database: "ok", applied: status.applied, pending: status.pending)
        } catch let error as MigrationError {
            return Readiness(isReady: false, database: error.code, applied: [], pending: [])
        } catch {
            // Nothing could be read, so no migration is listed either way: "all pending" read as an empty database.
            let unreachable = (error as? PostgresError)?.code == .connectionFailed
            return Readiness(isReady: false, database: unreachable ? "unreachable" : "unavailable", applied: [], pending: [])
        }
    }

    /// The pool's connections by state, for the `crema_db_pool_connections` gauge.
    public struct PoolUsage: Sendable, Hashable {
        public var open: Int
        public var leased: Int
        public var waiting: Int
        public var max: Int
    }

    public var poolUsage: PoolUsage {
        get async {
            let usage = await pool.usage
            return PoolUsage(open: usage.open, leased: usage.leased, waiting: usage.waiting, max: usage.max)
        }
    }
}
