public import CremaCore
public import CremaPostgres
public import Foundation

/// The SQL of an order's life after it is made: finding orders that waited too long (the sweep closes each through
/// `OrderService`, like any event), removing personal data after the retention period, and erasing one customer.
public struct LifecycleRepository: Repository {
    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    /// An open order past its store's limit, as the scan saw it; the close re-checks under the order's lock (its
    /// version must still be `version`).
    public struct OverdueOrder: Sendable, Hashable {
        public var tenant: String
        public var order: Order
        public var reason: ExpiryReason
    }

    /// Up to `limit` orders of every tenant that `OrderExpiry.due` says are overdue at `now`, oldest first. The SQL only
    /// narrows the scan (to the open orders, `orders_open`); the core's rule decides.
    /// Orders in `excluding` are left out (the sweep's quarantine of orders whose close failed).
    public func overdue(now: Date, limit: Int, excluding: [UUID] = []) async throws(StoreError) -> [OverdueOrder] {
        try await database {
            try await pool.withConnection { connection in
                let rows = try await connection.query(
                    """
                    SELECT tenant_id, \(unescaped: OrderRow.columns), s.ready_expiry_minutes, s.queued_expiry_minutes
                    FROM orders o CROSS JOIN LATERAL (
                        SELECT ready_expiry_minutes, queued_expiry_minutes FROM stores WHERE tenant_id = o.tenant_id AND store_id = o.store_id
                    ) s
                    WHERE o.is_open AND ((o.state = 'ready' AND o.updated_at <= \(now)::timestamptz - make_interval(mins => s.ready_expiry_minutes))
                        OR (o.state = 'queued' AND o.placed_at <= \(now)::timestamptz - make_interval(mins => s.queued_expiry_minutes)))
                      AND NOT (o.order_id = ANY(\(PostgresTextArray(excluding.map { $0.uuidString.lowercased() }))::uuid[]))
                    ORDER BY o.placed_at, o.order_id
                    LIMIT \(limit)
                    """)
                return try rows.compactMap { row in
                    let order = try OrderRow.order(from: row)
                    let limits = ExpiryLimits(
                        readyMinutes: try row.decode("ready_expiry_minutes"), queuedMinutes: try row.decode("queued_expiry_minutes"))
                    guard let reason = OrderExpiry.due(order, limits: limits, now: now) else { return nil }
                    return OverdueOrder(tenant: try row.decode("tenant_id"), order: order, reason: reason)
                }
            }
        }
    }

    /// The tenants with orders whose personal data is due for removal (ended before `cutoff`), or customer tokens retired
    /// before it, in `tenant_id` order: retention works tenant by tenant, so each of its statements names its tenant (on
    /// Citus, one shard) and locks no rows across tenants.
    public func tenantsWithPersonalDataDue(endedBefore cutoff: Date) async throws(StoreError) -> [String] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT t.tenant_id FROM \(unescaped: TenantSurvey.tenants) t
                    WHERE EXISTS (
                        SELECT 1 FROM orders o
                        WHERE o.tenant_id = t.tenant_id AND NOT o.is_open AND o.personal_data_removed_at IS NULL
                          AND o.placed_at < \(cutoff) AND o.updated_at < \(cutoff))
                    UNION
                    -- A customer's tokens need no store: their tenants, read without the reference table (TenantSurvey).
                    SELECT DISTINCT c.tenant_id FROM customer_tokens c WHERE c.retired_at < \(cutoff)
                    ORDER BY 1
                    """
                ).map { try $0.decode("tenant_id") }
            }
        }
    }

    /// Removes the personal data of up to `limit` of `tenant`'s orders that ended before `cutoff`, and deletes its
    /// customer tokens retired before it; returns how many orders were scrubbed. Orders another process is scrubbing
    /// are skipped (`SKIP LOCKED`), so two processes share the work.
    public func removePersonalData(of tenant: String, endedBefore cutoff: Date, now: Date, limit: Int) async throws(StoreError) -> Int {
        try await database {
            try await pool.withTransaction { connection in
                let answers = try await connection.pipeline(PersonalDataScrub.erasureSettings + [
                    """
                    SELECT \(PersonalDataScrub.selectList(tenant: tenant)) FROM orders
                    WHERE tenant_id = \(tenant) AND NOT is_open AND personal_data_removed_at IS NULL
                      AND placed_at < \(cutoff) AND updated_at < \(cutoff)
                    ORDER BY placed_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                    """,
                    "DELETE FROM customer_tokens WHERE tenant_id = \(tenant) AND retired_at < \(cutoff)",
                ])
                let targets = try answers[PersonalDataScrub.erasureSettings.count].map(PersonalDataScrub.target(from:))
                guard !targets.isEmpty else { return 0 }
                _ = try await connection.query("WITH \(try PersonalDataScrub.ctes(targets, tenant: tenant, at: now)) SELECT 1")
                return targets.count
            }
        }
    }

    /// Erases one customer of `tenant` everywhere at once, in one transaction: their orders' personal data (as
    /// retention removes it), every token they registered, the stored answers that mention them; logs the erasure with
    /// the ref's SHA-256 only. Nil when the tenant knows no such customer (no order, no token): nothing is logged.
    public func erase(customerRef: String, tenant: String, now: Date) async throws(StoreError) -> ErasureCounts? {
        try await database {
            try await pool.withTransaction { connection in
                let answers = try await connection.pipeline(PersonalDataScrub.erasureSettings + [
                    """
                    SELECT \(PersonalDataScrub.selectList(tenant: tenant)) FROM orders
                    WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) ORDER BY placed_at FOR UPDATE
                    """,
                    """
                    SELECT (SELECT count(*) FROM customer_tokens WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef))
                         + (SELECT count(*) FROM board_start_tokens WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef)) AS n
                    """,
                ])
                let read = answers.dropFirst(PersonalDataScrub.erasureSettings.count)
                let targets = try read[read.startIndex].map(PersonalDataScrub.target(from:))
                let tokens = try read[read.startIndex + 1].first?.decode("n", as: Int.self) ?? 0
                guard !targets.isEmpty || tokens > 0 else { return nil }
                // The ref as a placement's stored request body (canonical JSON, sorted keys, no spaces) holds it: only
                // `"customer_ref":"<ref>"`, so a short ref does not also match other fields of other customers' bodies.
                let refField = #""customer_ref":"# + String(decoding: try JSONEncoder.withoutEscapingSlashes.encode(customerRef), as: UTF8.self)
                let row = try await connection.query(
                    """
                    WITH \(try PersonalDataScrub.ctes(targets, tenant: tenant, at: now)), removed_tokens AS (
                        DELETE FROM customer_tokens WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) RETURNING 1
                    ), removed_board_tokens AS (
                        DELETE FROM board_start_tokens WHERE tenant_id = \(tenant) AND customer_ref = \(customerRef) RETURNING 1
                    ), scrubbed_customer_webhooks AS (
                        -- token.retired events of the customer's own tokens (those of an order are scrubbed with it).
                        UPDATE webhook_events w SET customer_ref = NULL, body = \(WebhookOutbox.redactedBody("w.body"))
                        WHERE w.tenant_id = \(tenant) AND w.customer_ref = \(customerRef)
                        RETURNING 1
                    ), scrubbed_keys AS (
                        UPDATE idempotency_keys k SET request_body = '', response_body = ''
                        WHERE k.tenant_id = \(tenant) AND (k.request_body <> '' OR k.response_body <> '')
                          AND (strpos(k.request_body, \(refField)) > 0 OR EXISTS (
                              SELECT 1 FROM p WHERE strpos(k.request_path, p.order_id::text) > 0 OR strpos(k.response_body, p.order_id::text) > 0))
                        RETURNING 1
                    ), counts AS (
                        SELECT (SELECT count(*) FROM scrubbed_orders)::int AS orders, (SELECT count(*) FROM scrubbed_events)::int AS events,
                               (SELECT count(*) FROM scrubbed_deliveries)::int AS deliveries,
                               ((SELECT count(*) FROM removed_tokens) + (SELECT count(*) FROM removed_activity_tokens)
                                + (SELECT count(*) FROM removed_board_tokens))::int AS tokens,
                               (SELECT count(*) FROM scrubbed_keys)::int AS idempotency_keys
                    ), logged AS (
                        INSERT INTO customer_erasures (tenant_id, customer_ref_sha256, erased_at, orders, events, deliveries, tokens, idempotency_keys)
                        SELECT \(tenant), sha256(convert_to(\(customerRef), 'UTF8')), \(now), orders, events, deliveries, tokens, idempotency_keys
                        FROM counts
                    )
                    SELECT * FROM counts
                    """
                ).first
                guard let row else { throw PostgresError(.decoding, detail: "erasure counted nothing") }
                return ErasureCounts(
                    orders: try row.decode("orders"), events: try row.decode("events"), deliveries: try row.decode("deliveries"),
                    tokens: try row.decode("tokens"), idempotencyKeys: try row.decode("idempotency_keys"))
            }
        }
    }
}

extension JSONEncoder {
    /// Encodes as the API's canonical request bodies do: `/` is not escaped.
    fileprivate static var withoutEscapingSlashes: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
