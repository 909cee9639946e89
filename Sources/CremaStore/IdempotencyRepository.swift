public import CremaPostgres
public import Foundation

/// Idempotency-Keys past their window. Claiming and answering a key happen inside a command's transaction
/// (`OrderTransaction`); this is the housekeeping around them.
public struct IdempotencyRepository: Repository {
    /// How long an Idempotency-Key keeps its first answer.
    public static let window: TimeInterval = 24 * 60 * 60

    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// Deletes keys older than the window and says how many went. Correctness does not depend on it (an
    /// expired key is reclaimed on use); it keeps the table small.
    public func pruneExpired() async throws(StoreError) -> Int {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM idempotency_keys
                        WHERE created_at < now() - make_interval(secs => \(Self.window)) RETURNING 1
                    ) SELECT count(*) AS n FROM gone
                    """)
                return try rows.first?.decode("n", as: Int.self) ?? 0
            }
        }
    }
}
