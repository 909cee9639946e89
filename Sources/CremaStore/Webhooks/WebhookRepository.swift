public import CremaCore
public import CremaPostgres
public import Foundation

/// Webhook endpoints and their outbox (docs/webhooks.md): registration, the delivery log and replay for the API;
/// claim, record, rescue and prune for the webhook dispatcher. Events are written by `WebhookOutbox` in the
/// transactions of the facts they tell.
public struct WebhookRepository: Repository {
    public let pool: PostgresPool

    public init(pool: PostgresPool) { self.pool = pool }

    // MARK: - Endpoints

    /// Registers an endpoint, refused (`limitReached`) when the tenant already has `limit` enabled ones: each endpoint
    /// is a row written for every fact it subscribes to, and a sending slot while its receiver answers.
    public func insert(_ endpoint: StoredWebhookEndpoint, limit: Int) async throws(StoreError) {
        try await database {
            try await pool.withTransaction { connection in
                // Registrations of one tenant take turns (`TenantTurn`), so two cannot both take the last place; the
                // count is a statement of its own (its snapshot after the turn is taken), in the same round trip.
                let turn = TenantTurn.webhookEndpoints(tenant: endpoint.tenant)
                let held = try await connection.pipeline([
                    turn.take,
                    "SELECT count(*) AS endpoints FROM webhook_endpoints WHERE tenant_id = \(endpoint.tenant) AND disabled_at IS NULL",
                ])
                guard try held[1][0].decode("endpoints", as: Int.self) < limit else { throw StoreError.limitReached(.webhooks, limit: limit) }
                _ = try await connection.pipeline([
                    """
                    INSERT INTO webhook_endpoints (tenant_id, endpoint_id, url, events, stores, sealed_secret, created_at)
                    VALUES (\(endpoint.tenant), \(endpoint.id), \(endpoint.url), \(PostgresTextArray(endpoint.events.map(\.rawValue)))::text[],
                            \(endpoint.stores.map(PostgresTextArray.init))::text[], decode(\(Data(endpoint.sealedSecret).base64EncodedString()), 'base64'),
                            \(endpoint.createdAt))
                    """,
                    turn.end,
                ])
            }
        }
    }

    private static let columns: StaticString = """
        e.tenant_id, e.endpoint_id, e.url, to_json(e.events) AS events, to_json(e.stores) AS stores,
        encode(e.sealed_secret, 'base64') AS secret, e.created_at, e.disabled_at, e.disabled_reason
        """

    /// Which endpoints a key reaches: a key for every store all of its tenant's, a key for some stores only those
    /// registered for a subset of them.
    private static func visible(to scope: TenantScope) -> PostgresQuery {
        let stores = scope.sortedStores.map(PostgresTextArray.init)
        return "e.tenant_id = \(scope.tenant) AND (\(stores)::text[] IS NULL OR (e.stores IS NOT NULL AND e.stores <@ \(stores)::text[]))"
    }

    /// The endpoints `scope` reaches, oldest first.
    public func endpoints(in scope: TenantScope) async throws(StoreError) -> [StoredWebhookEndpoint] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM webhook_endpoints e WHERE \(Self.visible(to: scope)) ORDER BY e.created_at, e.endpoint_id"
                ).map(Self.endpoint(from:))
            }
        }
    }

    public func endpoint(id: UUID, in scope: TenantScope) async throws(StoreError) -> StoredWebhookEndpoint? {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    "SELECT \(unescaped: Self.columns) FROM webhook_endpoints e WHERE \(Self.visible(to: scope)) AND e.endpoint_id = \(id)"
                ).first.map(Self.endpoint(from:))
            }
        }
    }

    /// Removes an endpoint and its deliveries; false when `scope` reaches no such endpoint.
    public func delete(id: UUID, in scope: TenantScope) async throws(StoreError) -> Bool {
        try await database {
            try await pool.withConnection { connection in
                try await !connection.query("DELETE FROM webhook_endpoints e WHERE \(Self.visible(to: scope)) AND e.endpoint_id = \(id) RETURNING 1").isEmpty
            }
        }
    }

    private static func endpoint(from row: PostgresRow) throws -> StoredWebhookEndpoint {
        let events = try row.decode("events", as: PostgresJSON.self).decode([String].self).compactMap(WebhookEventType.init)
        return StoredWebhookEndpoint(
            tenant: try row.decode("tenant_id"), id: try row.decode("endpoint_id"), url: try row.decode("url"), events: events,
            stores: try row.decode("stores", as: PostgresJSON?.self)?.decode([String]?.self),
            sealedSecret: Array(Data(base64Encoded: try row.decode("secret", as: String.self), options: .ignoreUnknownCharacters) ?? Data()), createdAt: try row.decode("created_at"),
            disabledAt: try row.decode("disabled_at", as: Date?.self), disabledReason: try row.decode("disabled_reason", as: String?.self))
    }

    // MARK: - The delivery log and replay

    /// An endpoint's deliveries, newest first, up to `limit` (before delivery `before` when given); nil when `scope`
    /// reaches no such endpoint.
    public func deliveries(endpoint: UUID, in scope: TenantScope, limit: Int, before: Int64?) async throws(StoreError) -> [WebhookDeliveryRecord]? {
        try await database {
            try await pool.withConnection { connection in
                let answers = try await connection.pipeline([
                    "SELECT 1 FROM webhook_endpoints e WHERE \(Self.visible(to: scope)) AND e.endpoint_id = \(endpoint)",
                    """
                    SELECT \(unescaped: Self.deliveryColumns)
                    FROM webhook_deliveries d JOIN webhook_events w ON w.tenant_id = d.tenant_id AND w.event_id = d.event_id
                    WHERE d.tenant_id = \(scope.tenant) AND d.endpoint_id = \(endpoint) AND (\(before)::bigint IS NULL OR d.delivery_id < \(before))
                    ORDER BY d.delivery_id DESC LIMIT \(limit)
                    """,
                ])
                guard !answers[0].isEmpty else { return nil }
                return try answers[1].map(Self.delivery(from:))
            }
        }
    }

    private static let deliveryColumns: StaticString = """
        d.delivery_id, d.event_id, w.event_type, w.order_id, d.state, d.attempts, d.replays, d.last_status, d.last_error, d.created_at,
        CASE WHEN d.state = 'pending' THEN d.run_at END AS next_attempt_at, d.sent_at, d.finished_at
        """

    private static func delivery(from row: PostgresRow) throws -> WebhookDeliveryRecord {
        WebhookDeliveryRecord(
            id: try row.decode("delivery_id"), eventID: try row.decode("event_id"), eventType: try row.decode("event_type"),
            orderID: try row.decode("order_id", as: UUID?.self), state: try row.decode("state"), attempts: try row.decode("attempts"),
            replays: try row.decode("replays"), lastStatus: try row.decode("last_status", as: Int?.self),
            lastError: try row.decode("last_error", as: String?.self), createdAt: try row.decode("created_at"),
            nextAttemptAt: try row.decode("next_attempt_at", as: Date?.self), sentAt: try row.decode("sent_at", as: Date?.self),
            finishedAt: try row.decode("finished_at", as: Date?.self))
    }

    /// What asking to send a delivery again found.
    public enum Replay: Sendable, Hashable {
        case replayed(WebhookDeliveryRecord)
        case unknownDelivery
        /// Only a dead delivery is replayed (a pending one is still being tried; a sent one arrived).
        case notDead(state: String)
        /// The endpoint answered 410 Gone and was disabled.
        case endpointDisabled
    }

    /// Puts a dead delivery back to pending with a fresh set of attempts, due at `now`.
    public func replay(delivery: Int64, endpoint: UUID, in scope: TenantScope, now: Date) async throws(StoreError) -> Replay {
        try await database {
            try await pool.withTransaction { connection in
                guard let current = try await connection.query(
                    """
                    SELECT d.state, e.disabled_at IS NOT NULL AS disabled
                    FROM webhook_deliveries d JOIN webhook_endpoints e ON e.tenant_id = d.tenant_id AND e.endpoint_id = d.endpoint_id
                    WHERE \(Self.visible(to: scope)) AND d.endpoint_id = \(endpoint) AND d.delivery_id = \(delivery)
                    FOR UPDATE OF d
                    """
                ).first else { return .unknownDelivery }
                if try current.decode("disabled", as: Bool.self) { return .endpointDisabled }
                let state: String = try current.decode("state")
                guard state == "dead" else { return .notDead(state: state) }
                let row = try await connection.query(
                    """
                    WITH d AS (
                        UPDATE webhook_deliveries SET state = 'pending', attempts = 0, replays = replays + 1, run_at = \(now),
                               finished_at = NULL, locked_until = NULL
                        WHERE tenant_id = \(scope.tenant) AND delivery_id = \(delivery)
                        RETURNING *
                    )
                    SELECT \(unescaped: Self.deliveryColumns) FROM d JOIN webhook_events w ON w.tenant_id = d.tenant_id AND w.event_id = d.event_id
                    """
                )[0]
                return .replayed(try Self.delivery(from: row))
            }
        }
    }

    // MARK: - The dispatcher's side

    /// Claims up to `limit` due deliveries for `lease` seconds, at most `perEndpoint` in flight for any endpoint and
    /// `perTenant` for any tenant (in every process together), the tenants taking turns: one slow receiver holds only
    /// its own deliveries, and one tenant's slow receivers only its share of the sending slots. Each tenant's claim is
    /// its own statement (`claim(for:…)`), so under Citus it runs on the tenant's shard (a `FOR UPDATE` across shards is
    /// refused there): every tenant with due deliveries first gets an equal part of `limit`, then what the others left
    /// goes to those that filled theirs, in `tenant_id` order.
    public func claim(limit: Int, perEndpoint: Int, perTenant: Int, lease: Double, now: Date) async throws -> [ClaimedWebhook] {
        let tenants = try await tenantsWithDueWork(now: now)
        guard !tenants.isEmpty, limit > 0 else { return [] }
        let part = max(1, (limit + tenants.count - 1) / tenants.count)
        var claimed: [ClaimedWebhook] = []
        var hungry: [String] = []
        for tenant in tenants where claimed.count < limit {
            let taken = try await claim(
                for: tenant, limit: min(part, limit - claimed.count), perEndpoint: perEndpoint, perTenant: perTenant, lease: lease, now: now)
            claimed += taken
            if taken.count == part { hungry.append(tenant) }
        }
        for tenant in hungry where claimed.count < limit {
            claimed += try await claim(
                for: tenant, limit: limit - claimed.count, perEndpoint: perEndpoint, perTenant: perTenant, lease: lease, now: now)
        }
        return claimed.sorted { $0.id < $1.id }
    }

    /// The tenants with a pending delivery due at `now`, in `tenant_id` order: a read without locks, which Citus fans out.
    public func tenantsWithDueWork(now: Date) async throws -> [String] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT t.tenant_id FROM \(unescaped: TenantSurvey.tenantsWithEndpoints) t
                WHERE EXISTS (
                    SELECT 1 FROM webhook_deliveries d WHERE d.tenant_id = t.tenant_id AND d.state = 'pending' AND d.run_at <= \(now))
                ORDER BY t.tenant_id
                """)
        }.map { try $0.decode("tenant_id") }
    }

    /// Claims up to `limit` of `tenant`'s due deliveries, oldest first, within its share (`perTenant` in flight over
    /// every process) and each endpoint's room (`perEndpoint`): one statement that names the tenant on every table.
    public func claim(
        for tenant: String, limit: Int, perEndpoint: Int, perTenant: Int, lease: Double, now: Date
    ) async throws -> [ClaimedWebhook] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                WITH busy AS (
                    -- The tenant's requests in flight, over every process (few rows: the partial index holds only these).
                    SELECT count(*) AS n FROM webhook_deliveries WHERE tenant_id = \(tenant) AND state = 'inflight'
                ), e AS (
                    SELECT e.tenant_id, e.endpoint_id,
                           \(perEndpoint) - (SELECT count(*) FROM webhook_deliveries i
                                             WHERE i.tenant_id = \(tenant) AND i.endpoint_id = e.endpoint_id AND i.state = 'inflight') AS room
                    FROM webhook_endpoints e WHERE e.tenant_id = \(tenant) AND e.disabled_at IS NULL
                ), c AS (
                    -- Up to the tenant's share: a tenant whose receivers never answer holds at most that many sending slots.
                    SELECT x.delivery_id FROM e CROSS JOIN LATERAL (
                        SELECT d.delivery_id, d.run_at FROM webhook_deliveries d
                        WHERE d.tenant_id = \(tenant) AND d.endpoint_id = e.endpoint_id AND d.state = 'pending' AND d.run_at <= \(now)
                        ORDER BY d.run_at, d.delivery_id LIMIT greatest(e.room, 0) FOR UPDATE SKIP LOCKED
                    ) x
                    ORDER BY x.run_at, x.delivery_id
                    LIMIT greatest(least(\(limit), \(perTenant) - (SELECT n FROM busy)), 0)
                ), u AS (
                    UPDATE webhook_deliveries d SET state = 'inflight', attempts = d.attempts + 1,
                           locked_until = \(now.addingTimeInterval(lease))
                    FROM c WHERE d.tenant_id = \(tenant) AND d.delivery_id = c.delivery_id
                    RETURNING d.tenant_id, d.delivery_id, d.endpoint_id, d.event_id, d.attempts
                )
                SELECT u.*, e.url, encode(e.sealed_secret, 'base64') AS secret, w.event_type, w.body::text AS body
                FROM u
                JOIN webhook_endpoints e ON e.tenant_id = \(tenant) AND e.endpoint_id = u.endpoint_id
                JOIN webhook_events w ON w.tenant_id = \(tenant) AND w.event_id = u.event_id
                ORDER BY u.delivery_id
                """
            ).map { row in
                ClaimedWebhook(
                    tenant: try row.decode("tenant_id"), id: try row.decode("delivery_id"), endpointID: try row.decode("endpoint_id"),
                    url: try row.decode("url"), sealedSecret: Array(Data(base64Encoded: try row.decode("secret", as: String.self), options: .ignoreUnknownCharacters) ?? Data()),
                    eventID: try row.decode("event_id"), eventType: try row.decode("event_type"), body: try row.decode("body"),
                    attempts: try row.decode("attempts"))
            }
        }
    }

    /// Writes one attempt's outcome; an outcome of an attempt that is no longer the delivery's (its lease ran out and it
    /// was claimed again) changes nothing. `gone` disables the endpoint and ends everything still pending for it.
    public func record(_ delivery: ClaimedWebhook, _ outcome: WebhookOutcome, now: Date) async throws {
        var state = "dead"
        var status: Int?
        var error: String?
        var runAt: Date?
        var gone = false
        switch outcome {
        case .sent(let code):
            state = "sent"
            status = code
        case .retry(let at, let code, let reason):
            state = "pending"
            status = code
            error = reason
            runAt = at
        case .dead(let code, let reason):
            status = code
            error = reason
        case .gone(let code):
            status = code
            error = "the endpoint answered \(code) Gone: it is disabled and gets nothing more"
            gone = true
        }
        _ = try await pool.withConnection { connection in
            try await connection.query(
                """
                WITH outcome AS (
                    UPDATE webhook_deliveries d SET state = next.state, last_status = \(status), last_error = \(error),
                           run_at = coalesce(\(runAt)::timestamptz, d.run_at), locked_until = NULL,
                           sent_at = CASE WHEN next.state = 'sent' THEN \(now)::timestamptz END,
                           finished_at = CASE WHEN next.state IN ('sent', 'dead') THEN \(now)::timestamptz END
                    -- A failure after its endpoint was disabled (another request got 410 meanwhile) is dead: nothing more
                    -- goes to that endpoint. Read by a join to the delivery's endpoint (which its foreign key keeps),
                    -- not a CTE of its own: Citus ran that one on the worker as a nested distributed query and refused
                    -- it ("cannot execute a distributed query from a query on a shard").
                    FROM (SELECT CASE WHEN \(state) = 'pending' AND e.disabled_at IS NOT NULL THEN 'dead' ELSE \(state) END AS state
                          FROM webhook_endpoints e WHERE e.tenant_id = \(delivery.tenant) AND e.endpoint_id = \(delivery.endpointID)) next
                    WHERE d.tenant_id = \(delivery.tenant) AND d.delivery_id = \(delivery.id) AND d.state = 'inflight' AND d.attempts = \(delivery.attempts)
                    RETURNING 1
                ), disabled AS (
                    UPDATE webhook_endpoints SET disabled_at = \(now), disabled_reason = \(error)
                    WHERE \(gone) AND tenant_id = \(delivery.tenant) AND endpoint_id = \(delivery.endpointID) AND disabled_at IS NULL
                    RETURNING 1
                ), abandoned AS (
                    UPDATE webhook_deliveries SET state = 'dead', last_error = \(error), finished_at = \(now), locked_until = NULL
                    WHERE \(gone) AND tenant_id = \(delivery.tenant) AND endpoint_id = \(delivery.endpointID) AND state = 'pending'
                    RETURNING 1
                )
                SELECT 1
                """)
        }
    }

    /// Puts deliveries whose lease ran out (a dispatcher died mid-request) back to pending: their attempt counts, and
    /// one past the last is dead. Returns how many were rescued.
    @discardableResult
    public func rescueExpiredLeases(now: Date, maxAttempts: Int) async throws -> Int {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE webhook_deliveries
                SET state = CASE WHEN attempts >= \(maxAttempts) THEN 'dead' ELSE 'pending' END,
                    last_error = CASE WHEN attempts >= \(maxAttempts) THEN 'lease expired after the last attempt' ELSE 'lease expired (the sending process stopped)' END,
                    finished_at = CASE WHEN attempts >= \(maxAttempts) THEN \(now)::timestamptz END,
                    locked_until = NULL
                WHERE state = 'inflight' AND locked_until < \(now)
                RETURNING 1
                """).count
        }
    }

    /// Deletes sent deliveries finished more than `retention` seconds ago, then events no delivery refers to any more
    /// (dead deliveries stay for replay until their endpoint is deleted). Returns how many deliveries went.
    @discardableResult
    public func prune(olderThan retention: Double, now: Date, batch: Int = 5_000) async throws -> Int {
        let cutoff = now.addingTimeInterval(-retention)
        return try await pool.withConnection { connection in
            let answers = try await connection.pipeline([
                """
                DELETE FROM webhook_deliveries WHERE (tenant_id, delivery_id) IN (
                    SELECT tenant_id, delivery_id FROM webhook_deliveries WHERE state = 'sent' AND finished_at < \(cutoff) LIMIT \(batch))
                RETURNING 1
                """,
                """
                DELETE FROM webhook_events w WHERE w.created_at < \(cutoff)
                  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.tenant_id = w.tenant_id AND d.event_id = w.event_id)
                """,
            ])
            return answers[0].count
        }
    }

    /// Due and in-flight deliveries and the oldest due one's wait, for metrics.
    public func depth(now: Date) async throws -> (pending: Int, inflight: Int, dead: Int, oldest: Double) {
        try await pool.withConnection { connection in
            let row = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE state = 'pending' AND run_at <= \(now)) AS pending,
                       count(*) FILTER (WHERE state = 'inflight') AS inflight,
                       count(*) FILTER (WHERE state = 'dead') AS dead,
                       coalesce(extract(epoch FROM \(now) - min(run_at) FILTER (WHERE state = 'pending' AND run_at <= \(now))), 0)::float8 AS oldest
                FROM webhook_deliveries d WHERE state IN ('pending', 'inflight', 'dead')
                  AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e
                                  WHERE e.tenant_id = d.tenant_id AND e.endpoint_id = d.endpoint_id AND e.disabled_at IS NOT NULL)
                """)[0]
            return (try row.decode("pending"), try row.decode("inflight"), try row.decode("dead"), try row.decode("oldest"))
        }
    }
}
