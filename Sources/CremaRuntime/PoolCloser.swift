import CremaPostgres
import ServiceLifecycle

/// Closes the database pool once everything after it in `CremaProcess.services` has stopped (services stop in reverse order).
struct PoolCloser: Service, CustomStringConvertible {
    let pool: PostgresPool
    var description: String { "PoolCloser" }

    func run() async throws {
        try? await gracefulShutdown()
        await pool.close()
    }
}
