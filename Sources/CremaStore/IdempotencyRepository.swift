public import CremaClock
public import CremaPostgres
public import Foundation

/// Idempotency-Keys outside the order commands, which claim and answer theirs inside their own transaction
/// (`OrderTransaction`): the claims of administrative and webhook POSTs, and pruning keys past their window.
public struct IdempotencyRepository: Repository {
    /// How long an Idempotency-Key keeps its first answer.
    public static let window: TimeInterval = 24 * 60 * 60

    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    /// Deletes keys older than the window and says how many went. Correctness does not depend on it (an
    /// expired key is reclaimed on use); it keeps the table small.
    public func pruneExpired() async throws(StoreError) -> Int {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM idempotency_keys
                        WHERE created_at < \(clock.now.addingTimeInterval(-Self.window)) RETURNING 1
                    ) SELECT count(*) AS n FROM gone
                    """)
                return try rows.first?.decode("n", as: Int.self) ?? 0
            }
        }
    }

    /// How long a claimed key may stay unanswered before another request with it may perform it again: a process
    /// that died between claiming and answering must not block the key for the whole window.
    public static let pendingLease: TimeInterval = 60

    /// What a key is for an administrative POST (one outside the order commands): the caller's to perform, or
    /// already answered.
    public enum Claim: Sendable {
        /// The key is new (or its last claim was abandoned): perform the request, then `complete` or `release`.
        case claimed(IdempotencyClaim)
        /// The key's first answer, to replay.
        case answered(CommandResponse)
        /// Another request holds the key's claim within its lease and has not answered yet: wait for it and claim again
        /// (`IdempotencyGate` in CremaService does).
        case inProgress
    }

    /// Claims the key for an administrative POST in `tenant` before it is performed, so two requests with one
    /// key (a double click, a retry racing the first) perform it once. Says `inProgress` while another request holds
    /// the claim; throws `idempotencyMismatch` when the key was used for another request (even while it is in progress).
    /// Administrative keys are kept under the empty store id (they belong to the tenant, not to a store); an
    /// unanswered claim is marked by status 0, as inside an order command's transaction.
    public func claim(_ request: IdempotentRequest, tenant: String) async throws(StoreError) -> Claim {
        let now = clock.now
        return try await database {
            try await pool.withConnection { connection in
                let claimed = try await connection.query(
                    """
                    INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body,
                                                  response_status, response_body, created_at)
                    VALUES (\(tenant), '', \(request.scope), \(request.key), \(request.path), \(request.body), 0, '', \(now))
                    ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
                        SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
                            response_status = 0, response_body = '', created_at = \(now)
                        WHERE idempotency_keys.created_at < \(now.addingTimeInterval(-Self.window))
                           OR (idempotency_keys.response_status = 0
                               AND idempotency_keys.created_at < \(now.addingTimeInterval(-Self.pendingLease)))
                    RETURNING created_at AS claimed_at
                    """)
                if let row = claimed.first {
                    // The time as written, in microseconds (PostgreSQL's precision): computed here, because Citus refuses a
                    // function that is not immutable, such as extract() on a timestamptz, in the RETURNING of an INSERT.
                    let written = try row.decode("claimed_at", as: Date.self)
                    return .claimed(IdempotencyClaim(request: request, tenant: tenant, claimedAt: Int64((written.timeIntervalSince1970 * 1_000_000).rounded())))
                }
                let rows = try await connection.query(
                    """
                    SELECT request_path = \(request.path) AND request_body = \(request.body) AS same, response_status, response_body
                    FROM idempotency_keys
                    WHERE tenant_id = \(tenant) AND store_id = '' AND scope = \(request.scope) AND idempotency_key = \(request.key)
                    """)
                // Gone between the two statements (released, pruned): claim again after the wait, as if still held.
                guard let row = rows.first else { return .inProgress }
                guard try row.decode("same", as: Bool.self) else { throw StoreError.idempotencyMismatch }
                let status: Int = try row.decode("response_status")
                guard status != 0 else { return .inProgress }
                return .answered(CommandResponse(status: status, body: try row.decode("response_body"), replayed: true))
            }
        }
    }

    /// Keeps the answer of a performed request for replays and says whether it was kept: false when the claim
    /// lapsed and was taken over (the new claimant's answer stays).
    @discardableResult
    public func complete(_ claim: IdempotencyClaim, answer: CommandResponse) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withConnection { connection in
                !(try await connection.query(
                    """
                    UPDATE idempotency_keys SET response_status = \(answer.status), response_body = \(answer.body)
                    WHERE \(Self.held(claim)) RETURNING 1
                    """)).isEmpty
            }
        }
    }

    /// Gives the key back after the request failed, so a retry performs it rather than waiting out the lease.
    public func release(_ claim: IdempotencyClaim) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query("DELETE FROM idempotency_keys WHERE \(Self.held(claim))")
            }
        }
    }

    /// The key's row while this claim still holds it. The time is bound as a timestamp (formatted to the microsecond,
    /// as it was written), not compared through extract(): Citus refuses a stable function of a column in a DELETE.
    private static func held(_ claim: IdempotencyClaim) -> PostgresQuery {
        """
        tenant_id = \(claim.tenant) AND store_id = '' AND scope = \(claim.request.scope) AND idempotency_key = \(claim.request.key)
          AND response_status = 0 AND created_at = \(Date(timeIntervalSince1970: Double(claim.claimedAt) / 1_000_000))
        """
    }
}

/// A key claimed by one administrative POST: the request it was claimed for and when, so completing or
/// releasing it touches only this claim, never a later one that took a lapsed claim over.
public struct IdempotencyClaim: Sendable {
    public let request: IdempotentRequest
    public let tenant: String
    /// `created_at` in microseconds since 1970, as the database stored it.
    let claimedAt: Int64
}
