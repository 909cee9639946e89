import CremaAPNsProtocol
import CremaClock
public import CremaCore
public import CremaPostgres
public import Foundation

/// The outbox as dispatchers use it (docs/design.md §6): claim due rows under a lease with `FOR UPDATE SKIP LOCKED`,
/// write outcomes back in one flight per tenant, rescue expired leases, prune finished rows.
public struct DeliveryRepository: Sendable {
    public let pool: PostgresPool

    public init(pool: PostgresPool) {
        self.pool = pool
    }

    /// Claims up to `limit` due rows of `tenant` for `lease`; another dispatcher skips them until the lease runs out.
    ///
    /// One tenant at a time (docs/design.md §6): a dispatcher gives tenants with due work turns (`ClaimTurns`), so one
    /// tenant's backlog holds another's push back by at most one claim, and each statement names its tenant, so on
    /// Citus it runs on one shard (a `FOR UPDATE` across shards is refused there).
    ///
    /// Ordering (`DeliveryOrdering`; in SQL, `DeliveryOrderingSQL`): first withdraws the tenant's
    /// pending rows that must never go (a newer push of the same activity was planned, or a start's order finished or
    /// registered its activity), then claims a Live Activity row only when no other row of its activity is pending or
    /// in flight.
    ///
    /// `apps`: the apps (tenant and bundle id) this dispatcher can sign for; rows of other apps, another tenant's app
    /// of the same bundle id among them, are left for an instance that can
    /// (nil: every app, for the built-in simulator of a private database). `now` is the dispatcher's clock: what is
    /// due and when the lease ends are read from it, not from the database's, so a test moves time instead of waiting.
    /// `leaseID` names the claim, chosen before it is made: if its answer is lost, `release(leases:)` takes its rows back.
    public func claim(
        for tenant: String, limit: Int, lease: Duration, apps: Set<TenantApp>?, now: Date, leaseID: UUID = UUID()
    ) async throws -> [ClaimedDelivery] {
        let seconds = lease.timeInterval
        // One round trip: the withdrawal and the claim go in one pipelined flight (the claim sees what it withdrew),
        // one transaction until its Sync, planned once per connection (`planOnce`).
        let rows = try await pool.withConnection { connection in
            try await connection.pipeline([
                Self.planOnce,
                Self.withdrawStale(tenant: tenant, at: now),
                Self.claimable(tenant: tenant, limit: limit, seconds: seconds, apps: apps, now: now, leaseID: leaseID),
            ])
        }.last ?? []
        return try rows.map(Self.claimedDelivery)
    }

    /// Claims up to `limit` due rows over every tenant with due work, tenant by tenant in `tenant_id` order (each
    /// claim as `claim(for:…)` makes it), until `limit` is reached: for tools and tests that want what is due now,
    /// whoever's it is. The dispatcher takes turns instead (`ClaimTurns`).
    public func claim(limit: Int, lease: Duration, apps: Set<TenantApp>?, now: Date, leaseID: UUID = UUID()) async throws -> [ClaimedDelivery] {
        var claimed: [ClaimedDelivery] = []
        for tenant in try await tenantsWithDueWork(apps: apps, now: now) where claimed.count < limit {
            claimed += try await claim(for: tenant, limit: limit - claimed.count, lease: lease, apps: apps, now: now, leaseID: leaseID)
        }
        return claimed
    }

    /// The tenants with a pending row due at `now` that one of `apps` signs (nil: any), in `tenant_id` order: one probe
    /// of `delivery_outbox_due` per tenant. What a dispatcher reads when it has heard of no work (the poll fallback, a
    /// reconnection), not before each claim.
    public func tenantsWithDueWork(apps: Set<TenantApp>?, now: Date) async throws -> [String] {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                SELECT t.tenant_id FROM \(unescaped: TenantSurvey.tenants) t
                WHERE EXISTS (
                    SELECT 1 FROM delivery_outbox d
                    WHERE d.tenant_id = t.tenant_id AND d.finished_at IS NULL AND d.run_at <= \(now) AND d.state = 'pending'
                      AND \(Self.signable(by: apps)))
                ORDER BY t.tenant_id
                """)
        }.map { try $0.decode("tenant_id") }
    }

    private static func claimedDelivery(_ row: PostgresRow) throws -> ClaimedDelivery {
        let kind = try row.decode("target_kind", as: String?.self).flatMap(PushTargetKind.init)
        let targetID = try row.decode("target_id", as: Int64?.self)
        guard let pushType = APNsPushType(rawValue: try row.decode("push_type")) else {
            throw PostgresError(.decoding, detail: "unknown push type")
        }
        return ClaimedDelivery(
            tenantID: try row.decode("tenant_id"), bundleID: try row.decode("bundle_id", as: String?.self),
            storeID: try row.decode("store_id"), id: try row.decode("delivery_id"), orderID: try row.decode("order_id"),
            target: kind.flatMap { kind in targetID.map { PushTargetRef(kind: kind, id: $0) } },
            pushType: pushType, priority: try row.decode("priority", as: Int?.self),
            topic: try row.decode("topic", as: String?.self) ?? "", collapseID: try row.decode("collapse_id", as: String?.self),
            body: try row.decode("body", as: String?.self) ?? "", expiresAt: try row.decode("expires_at", as: Date?.self),
            attempts: try row.decode("attempts"), maxAttempts: try row.decode("max_attempts"),
            token: try row.decode("token", as: String?.self),
            environment: try row.decode("environment", as: String?.self).flatMap(APNsEnvironment.init),
            tokenRetired: try row.decode("retired"), plannedAt: try row.decode("created_at"))
    }

    /// Claims up to `limit` rows of `tenant` due at `now` for `seconds`: pending, signable here, not withdrawn, not
    /// behind a push of the same sequence still in flight; returns them with their token.
    ///
    /// A HOT update (migration 017): no index names the columns it sets. Rows are found through `delivery_outbox_due`
    /// (unfinished rows, by due time), stepping over the rows in flight. The token is read for each row from the one
    /// table its kind names, so neither token table is joined (or, while empty, scanned) for rows of the other.
    /// Makes the statements after it in the same flight (one implicit transaction, to its Sync) run on the plan their
    /// prepared statement keeps rather than one made for each call's values: PostgreSQL's own choice for the claim is
    /// a fresh plan every call (its cost model prices a generic `LIMIT $n` at a tenth of the rows due, so the generic
    /// plan never looks cheaper), 0.6 ms of planning a claim, 15 µs a push, for the plan it would have reused (an
    /// index scan of `delivery_outbox_due` on the tenant and `run_at`, whatever the values). Not on Citus: it cannot
    /// make a distributed plan of a generic one ("could not create distributed plan"), so there the setting is left as
    /// it is (a look at `pg_extension`, a few rows). `set_config(…, true)` ends with the transaction and, unlike
    /// `SET LOCAL` outside `BEGIN`, logs no warning.
    static let planOnce: PostgresQuery = """
        SELECT set_config('plan_cache_mode',
            CASE WHEN EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN current_setting('plan_cache_mode')
                 ELSE 'force_generic_plan' END, true)
        """

    static func claimable(tenant: String, limit: Int, seconds: Double, apps: Set<TenantApp>?, now: Date, leaseID: UUID) -> PostgresQuery {
        """
        WITH c AS (
            SELECT tenant_id, store_id, order_id, delivery_id FROM delivery_outbox d
            WHERE tenant_id = \(tenant) AND finished_at IS NULL AND run_at <= \(now) AND state = 'pending'
              AND \(Self.signable(by: apps))
              -- Only Live Activity rows have an order to keep; the CASE spares every other row two function calls.
              AND CASE WHEN d.push_type = 'liveactivity' THEN
                  (\(DeliveryOrderingSQL.staleness(tenant: tenant) as PostgresQuery)) IS NULL AND NOT \(DeliveryOrderingSQL.sequenceBusy(tenant: tenant) as PostgresQuery)
                  ELSE true END
            ORDER BY run_at, delivery_id LIMIT \(limit) FOR UPDATE SKIP LOCKED
        ), u AS (
            UPDATE delivery_outbox d SET state = 'inflight', attempts = d.attempts + 1,
                   locked_until = \(now)::timestamptz + make_interval(secs => \(seconds)), lease = \(leaseID)
            FROM c WHERE d.tenant_id = \(tenant) AND d.store_id = c.store_id AND d.order_id = c.order_id AND d.delivery_id = c.delivery_id
            RETURNING d.tenant_id, d.store_id, d.bundle_id, d.delivery_id, d.order_id, d.target_kind, d.target_id, d.push_type, d.priority, d.topic,
                      d.collapse_id, d.body, d.expires_at, d.attempts, d.max_attempts, d.created_at
        )
        SELECT u.*, k.token, k.environment, k.retired_at IS NOT NULL AS retired
        FROM u
        LEFT JOIN LATERAL (
            SELECT p.token, p.environment, p.retired_at FROM push_targets p
            WHERE u.target_kind = 'live_activity' AND p.tenant_id = \(tenant) AND p.target_id = u.target_id
            UNION ALL
            SELECT ct.token, ct.environment, ct.retired_at FROM customer_tokens ct
            WHERE u.target_kind <> 'live_activity' AND ct.tenant_id = \(tenant) AND ct.token_id = u.target_id
        ) k ON true
        ORDER BY u.delivery_id
        """
    }

    /// Whether an outbox row (columns unqualified) is of one of `apps`, matched by tenant and bundle id together (a
    /// bundle id is its tenant's own); nil: every app. A row without an app is of none (false, not NULL, so it can be
    /// counted).
    static func signable(by apps: Set<TenantApp>?) -> PostgresQuery {
        let sorted = apps?.sorted()
        let tenants = sorted.map { PostgresTextArray($0.map(\.tenant)) }
        let bundles = sorted.map { PostgresTextArray($0.map(\.bundleID)) }
        return """
            (\(tenants)::text[] IS NULL OR EXISTS (
                SELECT 1 FROM unnest(\(tenants)::text[], \(bundles)::text[]) AS a(app_tenant, app_bundle)
                WHERE a.app_tenant = tenant_id AND a.app_bundle = bundle_id))
            """
    }

    /// The sentences beside the send-time withdrawal codes, as JSON for the SQL (`code → sentence`), built once.
    /// The SQL falls back to the code itself for a code missing here, so a new code can never null a reason.
    static let withdrawalSentences: PostgresJSON = {
        let reasons: [DeliveryReason] = [.supersededByNewer, .supersededByEnd, .startOrderFinished, .startActivityRegistered]
        let map = Dictionary(uniqueKeysWithValues: reasons.map { ($0.rawValue, DeliveryOrdering.sentence(for: $0)) })
        // A [String: String] always encodes.
        return (try? PostgresJSON(encoding: map)) ?? PostgresJSON(text: "{}")
    }()

    /// `tenant`'s pending Live Activity rows that must never go become `superseded` with their send-time reason; rows
    /// another dispatcher holds are skipped (the claim's own check keeps them from being sent meanwhile).
    static func withdrawStale(tenant: String, at now: Date) -> PostgresQuery {
        """
        WITH stale AS (
            SELECT d.tenant_id, d.store_id, d.order_id, d.delivery_id, s.code
            FROM delivery_outbox d
            -- OFFSET 0 keeps the rule to one evaluation per row.
            CROSS JOIN LATERAL (SELECT \(DeliveryOrderingSQL.staleness(tenant: tenant) as PostgresQuery) AS code OFFSET 0) s
            -- delivery_outbox_open_activity: the tenant's unfinished Live Activity rows, a handful at any time.
            WHERE d.tenant_id = \(tenant) AND d.finished_at IS NULL AND d.push_type = 'liveactivity' AND d.state = 'pending'
              AND s.code IS NOT NULL
            FOR UPDATE OF d SKIP LOCKED
        )
        UPDATE delivery_outbox d
        SET state = 'superseded', finished_at = \(now), locked_until = NULL,
            reason = coalesce(\(withdrawalSentences)::jsonb ->> s.code, s.code) || ' (Planned as ' || d.reason_code || ': ' || d.reason || ')',
            reason_code = s.code
        FROM stale s WHERE d.tenant_id = \(tenant) AND d.store_id = s.store_id AND d.order_id = s.order_id AND d.delivery_id = s.delivery_id
        """
    }

    /// Writes a batch of outcomes, retiring tokens APNs said are gone and writing the webhook events `delivery.dead`
    /// and `token.retired` (due at `now`) for endpoints that want them. An outcome of an attempt that is no longer the
    /// row's (its lease ran out and the row was claimed again) changes nothing, so recording an outcome again does too.
    ///
    /// Each tenant's outcomes are one transaction of their own (one flight, `DeliveryOutcomeStatements.recording`):
    /// under Citus it reaches that tenant's worker group only, and a tenant whose group cannot be reached keeps no
    /// other tenant's outcomes unrecorded. Every tenant is tried; the first failure is thrown after, and a caller that
    /// records the whole batch again changes nothing for the tenants already recorded.
    public func record(_ results: [DeliveryResult], now: Date) async throws {
        var outcomes: [String: [DeliveryOutcomeStatements.Outcome]] = [:]
        var tokens: [String: [DeliveryOutcomeStatements.TokenTable: [DeliveryOutcomeStatements.RetiredToken]]] = [:]
        // A token is retired once however many of the batch's pushes to it APNs refused: the first says why.
        var retiring: Set<TokenKey> = []
        for result in results {
            let d = result.delivery
            var row = DeliveryOutcomeStatements.Outcome(
                store_id: d.storeID, order_id: d.orderID, id: d.id, attempts: d.attempts, state: "sent",
                apns_id: result.apnsID?.uuidString.lowercased())
            switch result.outcome {
            case .sent(let status, _):
                row.status = status
            case .retry(let at, let status, let reason):
                row.state = "pending"
                row.run_at = at.timeIntervalSince1970
                row.status = status
                row.reason = reason
            case .dead(let status, let reason):
                row.state = "dead"
                row.status = status
                row.reason = reason
            case .tokenRetired(let status, let reason, let since):
                row.state = "dead"
                row.status = status
                row.reason = reason
                if let target = d.target, case let table = DeliveryOutcomeStatements.TokenTable(target.kind),
                    retiring.insert(TokenKey(tenant: d.tenantID, table: table, id: target.id)).inserted
                {
                    tokens[d.tenantID, default: [:]][table, default: []].append(
                        .init(id: target.id, reason: reason, since: since?.timeIntervalSince1970, event: UUID()))
                }
            case .skipped(let reason):
                row.state = "skipped"
                row.reason = reason
            case .heldForKey(let at, let status, let reason):
                row.state = "pending"
                row.run_at = at.timeIntervalSince1970
                row.status = status
                row.reason = reason
                row.uncounted = true
            }
            if row.state == "dead" { row.dead_event = UUID() }
            outcomes[d.tenantID, default: []].append(row)
        }
        try await Self.eachTenant(outcomes.keys) { tenant in
            let flight = try DeliveryOutcomeStatements.recording(
                tenant: tenant, outcomes: outcomes[tenant] ?? [], tokens: tokens[tenant] ?? [:], now: now)
            _ = try await pool.withConnection { connection in try await connection.pipeline(flight) }
        }
    }

    /// Runs `body` for each tenant in `tenant_id` order, each its own transaction: one whose body fails (its worker group
    /// failing over, a bad row) holds no other back. Every tenant is tried; the first failure is thrown after.
    private static func eachTenant(_ tenants: some Collection<String>, _ body: (String) async throws -> Void) async throws {
        var failure: (any Error)?
        for tenant in tenants.sorted() {
            do {
                try await body(tenant)
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
    }

    /// A token of one of the two token tables, for retiring it once.
    private struct TokenKey: Hashable {
        var tenant: String
        var table: DeliveryOutcomeStatements.TokenTable
        var id: Int64
    }

    /// Puts rows whose lease ran out by `now` (a dispatcher died mid-send) back to pending, or dead when out of attempts,
    /// writing `delivery.dead` for those that died (as `record` does). Returns how many were rescued. First the rows
    /// with an expired lease (a read without locks, which Citus fans out), then tenant by tenant one transaction that
    /// rescues those rows if they are still the attempt that was read (`DeliveryOutcomeStatements.rescue`).
    @discardableResult
    public func rescueExpiredLeases(at now: Date) async throws -> Int {
        try await pool.withConnection { connection in
            var expired: [String: [DeliveryOutcomeStatements.Outcome]] = [:]
            for row in try await connection.query(
                """
                SELECT tenant_id, store_id, order_id, delivery_id, attempts, attempts >= max_attempts AS dies FROM delivery_outbox
                WHERE finished_at IS NULL AND state = 'inflight' AND locked_until < \(now)
                """
            ) {
                let dies: Bool = try row.decode("dies")
                expired[try row.decode("tenant_id"), default: []].append(
                    .init(
                        store_id: try row.decode("store_id"), order_id: try row.decode("order_id"), id: try row.decode("delivery_id"),
                        attempts: try row.decode("attempts"), state: dies ? "dead" : "pending",
                        reason: dies ? "lease expired after the last attempt" : nil, dead_event: dies ? UUID() : nil))
            }
            var rescued = 0
            try await Self.eachTenant(expired.keys) { tenant in
                let flight = try DeliveryOutcomeStatements.rescue(tenant: tenant, rows: expired[tenant] ?? [], now: now)
                rescued += try await connection.pipeline(flight).last?.count ?? 0
            }
            return rescued
        }
    }

    /// Takes back the rows still in flight under `leases`: claims whose answer never reached the dispatcher that made them
    /// (the connection broke after the commit, as in a failover), so it never sent those rows. They are pending again,
    /// due as they were, the attempt not counted (it never began), at once rather than when the lease runs out. A lease
    /// whose rows were rescued and claimed again since names none of them any more. Returns how many were taken back.
    @discardableResult
    public func release(leases: [UUID]) async throws -> Int {
        guard !leases.isEmpty else { return 0 }
        let ids = PostgresTextArray(leases.map { $0.uuidString.lowercased() })
        return try await pool.withConnection { connection in
            try await connection.query(
                """
                UPDATE delivery_outbox SET state = 'pending', attempts = attempts - 1, locked_until = NULL, lease = NULL
                WHERE finished_at IS NULL AND state = 'inflight' AND lease = ANY(\(ids)::uuid[])
                RETURNING 1
                """).count
        }
    }

    /// Deletes rows finished more than `retention` before `now`, a bounded batch at a time. Returns how many went.
    @discardableResult
    public func prune(olderThan retention: TimeInterval, now: Date, batch: Int = 5_000) async throws -> Int {
        try await pool.withConnection { connection in
            try await connection.query(
                """
                DELETE FROM delivery_outbox WHERE (tenant_id, store_id, order_id, delivery_id) IN (
                    SELECT tenant_id, store_id, order_id, delivery_id FROM delivery_outbox
                    WHERE finished_at < \(now)::timestamptz - make_interval(secs => \(retention)) LIMIT \(batch))
                RETURNING 1
                """).count
        }
    }

    /// How much is due and how long the oldest due row has waited, for metrics, counting only the rows of `apps`
    /// (what a dispatcher can sign for; nil: all); `unsignable` is how many due rows are of other apps, waiting for
    /// an instance with their key.
    public func depth(apps: Set<TenantApp>?, now: Date) async throws -> OutboxDepth {
        try await pool.withConnection { connection in
            let row = try await connection.query(
                """
                SELECT count(*) FILTER (WHERE due AND signable) AS pending,
                       count(*) FILTER (WHERE state = 'inflight') AS inflight,
                       coalesce(extract(epoch FROM \(now)::timestamptz - min(run_at) FILTER (WHERE due AND signable)), 0)::float8 AS oldest,
                       count(*) FILTER (WHERE due AND NOT signable) AS unsignable
                FROM (
                    SELECT state, run_at, state = 'pending' AND run_at <= \(now) AS due,
                           \(Self.signable(by: apps)) AS signable
                    FROM delivery_outbox WHERE finished_at IS NULL
                ) d
                """)[0]
            return OutboxDepth(
                pending: try row.decode("pending"), inflight: try row.decode("inflight"), oldestPendingAge: try row.decode("oldest"),
                unsignable: try row.decode("unsignable"))
        }
    }

    /// Every decision for an order, oldest first; nil when there is no such order in `scope`.
    public func log(orderID: UUID, in scope: TenantScope) async throws -> [DeliveryLogEntry]? {
        try await pool.withConnection { connection in
            let rows = try await connection.query(
                """
                WITH o AS (SELECT tenant_id, store_id, order_id FROM orders WHERE \(scope.sql) AND order_id = \(orderID))
                SELECT (SELECT count(*) FROM o) AS found, d.delivery_id, d.order_version, d.order_event, d.target_kind,
                       left(coalesce(p.token, ct.token), 8) AS token, d.push_type, d.la_event, d.priority, d.collapse_id, d.state,
                       d.reason_code, d.reason, d.attempts, d.last_status, d.last_reason, d.apns_id, d.created_at, d.run_at,
                       d.expires_at, d.sent_at, d.finished_at, r.received_at, r.surface AS receipt_surface
                FROM (SELECT 1) one
                LEFT JOIN (delivery_outbox d JOIN o ON d.tenant_id = o.tenant_id AND d.store_id = o.store_id AND d.order_id = o.order_id) ON true
                LEFT JOIN delivery_receipts r
                       ON r.tenant_id = d.tenant_id AND r.store_id = d.store_id AND r.order_id = d.order_id AND r.delivery_id = d.delivery_id
                LEFT JOIN push_targets p ON d.target_kind = 'live_activity' AND p.tenant_id = d.tenant_id AND p.target_id = d.target_id
                LEFT JOIN customer_tokens ct ON d.target_kind <> 'live_activity' AND ct.tenant_id = d.tenant_id AND ct.token_id = d.target_id
                ORDER BY d.delivery_id
                """)
            guard let first = rows.first, try first.decode("found", as: Int.self) > 0 else { return nil }
            return try rows.compactMap { row -> DeliveryLogEntry? in
                guard let id = try row.decode("delivery_id", as: Int64?.self) else { return nil }
                /// A column's text as one of the core's values; a value the core does not know is a decoding failure.
                func typed<Value: RawRepresentable<String>>(_ column: String, as: Value.Type) throws -> Value? {
                    guard let text = try row.decode(column, as: String?.self) else { return nil }
                    guard let value = Value(rawValue: text) else { throw PostgresError(.decoding, detail: "unknown \(column) \(text)") }
                    return value
                }
                guard let state = try typed("state", as: DeliveryState.self) else { throw PostgresError(.decoding, detail: "no state") }
                return DeliveryLogEntry(
                    id: id, orderVersion: try row.decode("order_version"), orderEvent: try typed("order_event", as: OrderEventType.self),
                    targetKind: try typed("target_kind", as: PushTargetKind.self),
                    token: try row.decode("token", as: String?.self).map { $0 + "…" },
                    pushType: try typed("push_type", as: APNsPushType.self), liveActivityEvent: try typed("la_event", as: LiveActivityEvent.self),
                    priority: try row.decode("priority", as: Int?.self), collapseID: try row.decode("collapse_id", as: String?.self),
                    state: state, reasonCode: try row.decode("reason_code"), reason: try row.decode("reason"),
                    attempts: try row.decode("attempts"), apnsStatus: try row.decode("last_status", as: Int?.self),
                    apnsReason: try row.decode("last_reason", as: String?.self), apnsID: try row.decode("apns_id", as: UUID?.self),
                    plannedAt: try row.decode("created_at"), notBefore: try row.decode("run_at"),
                    expiresAt: try row.decode("expires_at", as: Date?.self), sentAt: try row.decode("sent_at", as: Date?.self),
                    finishedAt: try row.decode("finished_at", as: Date?.self), receivedAt: try row.decode("received_at", as: Date?.self),
                    receiptSurface: try typed("receipt_surface", as: ReceiptSurface.self))
            }
        }
    }
}
