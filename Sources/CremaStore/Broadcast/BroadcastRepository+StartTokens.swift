import CremaCore
import CremaPostgres
public import Foundation

extension BroadcastRepository {
    /// Keeps the customer's push-to-start token for the store's board (a new token replaces the old one), within
    /// `BoardStart.maxStoresPerCustomer` stores.
    public func registerStartToken(
        store: String, tenant: String, customerRef: String, token: String, environment: String, at: Date
    ) async throws(StoreError) {
        try await database {
            try await pool.withTransaction { connection in
                let answers = try await connection.pipeline([
                    "SELECT 1 FROM stores WHERE tenant_id = \(tenant) AND store_id = \(store)",
                    """
                    SELECT count(*) FILTER (WHERE store_id <> \(store))::int AS others FROM board_start_tokens
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) AND retired_at IS NULL
                    """,
                ])
                guard !answers[0].isEmpty else { throw StoreError.unknownStore(store) }
                guard try answers[1].first?.decode("others", as: Int.self) ?? 0 < BoardStart.maxStoresPerCustomer else {
                    throw StoreError.limitReached(.tokensPerCustomer, limit: BoardStart.maxStoresPerCustomer)
                }
                _ = try await connection.query(
                    """
                    INSERT INTO board_start_tokens (tenant_id, store_id, customer_ref, token, environment, registered_at)
                    VALUES (\(tenant), \(store), \(customerRef), \(token), \(environment), \(at))
                    ON CONFLICT (tenant_id, store_id, customer_ref) DO UPDATE
                        SET token = EXCLUDED.token, environment = EXCLUDED.environment, registered_at = EXCLUDED.registered_at,
                            retired_at = NULL, retired_reason = NULL
                    """)
            }
        }
    }

    /// Forgets the customer's token for the store's board; false when there was none.
    public func removeStartToken(store: String, tenant: String, customerRef: String) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withConnection { connection in
                !(try await connection.query(
                    """
                    DELETE FROM board_start_tokens WHERE tenant_id = \(tenant) AND store_id = \(store) AND customer_ref = \(customerRef)
                    RETURNING 1
                    """
                ).isEmpty)
            }
        }
    }

    /// The devices to start the store's board on now: customers with a token for it and an open order there placed
    /// after the board was last started for them.
    public func dueStarts(store: String, tenant: String) async throws(StoreError) -> [BoardStart] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT b.customer_ref, b.token, b.environment FROM board_start_tokens b
                    WHERE b.tenant_id = \(tenant) AND b.store_id = \(store) AND b.retired_at IS NULL
                      AND EXISTS (
                          SELECT 1 FROM orders o
                          WHERE o.tenant_id = b.tenant_id AND o.store_id = b.store_id AND o.customer_ref = b.customer_ref
                            AND o.is_open AND o.placed_at > coalesce(b.started_at, '-infinity'))
                    ORDER BY b.registered_at LIMIT \(BoardStart.batchLimit)
                    """
                ).map { BoardStart(customerRef: try $0.decode("customer_ref"), token: try $0.decode("token"), environment: try $0.decode("environment")) }
            }
        }
    }

    /// Records that the board was started on the customer's device (APNs accepted it), or that the token is dead.
    public func finishStart(_ start: BoardStart, store: String, tenant: String, retiredBecause reason: String?, at: Date) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    UPDATE board_start_tokens
                    SET started_at = CASE WHEN \(reason)::text IS NULL THEN \(at)::timestamptz ELSE started_at END,
                        retired_at = CASE WHEN \(reason)::text IS NULL THEN NULL ELSE \(at)::timestamptz END, retired_reason = \(reason)::text
                    WHERE tenant_id = \(tenant) AND store_id = \(store) AND customer_ref = \(start.customerRef) AND token = \(start.token)
                    """)
            }
        }
    }
}
