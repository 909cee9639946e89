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

    /// The first answer to an administrative POST with this key in `tenant`, or nil when the key is new; throws
    /// `idempotencyMismatch` when the key was used for another request. Administrative keys are kept under the
    /// empty store id (they belong to the tenant, not to a store).
    public func stored(_ request: IdempotentRequest, tenant: String) async throws(StoreError) -> CommandResponse? {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT request_path = \(request.path) AND request_body = \(request.body) AS same, response_status, response_body
                    FROM idempotency_keys
                    WHERE tenant_id = \(tenant) AND store_id = '' AND scope = \(request.scope) AND idempotency_key = \(request.key)
                      AND created_at >= now() - make_interval(secs => \(Self.window))
                    """)
                guard let row = rows.first else { return nil }
                guard try row.decode("same", as: Bool.self) else { throw StoreError.idempotencyMismatch }
                return CommandResponse(status: try row.decode("response_status"), body: try row.decode("response_body"), replayed: true)
            }
        }
    }

    /// Keeps an administrative POST's answer for replays (the first one wins if two raced).
    public func remember(_ request: IdempotentRequest, tenant: String, answer: CommandResponse) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body,
                                                  response_status, response_body)
                    VALUES (\(tenant), '', \(request.scope), \(request.key), \(request.path), \(request.body), \(answer.status), \(answer.body))
                    ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
                        SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
                            response_status = EXCLUDED.response_status, response_body = EXCLUDED.response_body, created_at = now()
                        WHERE idempotency_keys.created_at < now() - make_interval(secs => \(Self.window))
                    """)
            }
        }
    }
}
