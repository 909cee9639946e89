import CremaCore
import CremaPostgres
import Foundation

/// The statements that write one tenant's push outcomes, and those that rescue its expired leases, each a flight of
/// plain statements that name the tenant on every table and never read another statement's rows from a CTE.
///
/// Why not one statement with CTEs, as before: Citus plans each part of a statement that writes in a CTE apart, and
/// copies the rows one part hands another to every worker, so the outcome record's transaction reached every worker
/// group and committed in two phases there; a group's failover then cut off other tenants' records (docs/scaling.md,
/// "On a running cluster"). Here each statement reads tables only, and the flight's statements see each other's
/// writes as any statements of one transaction do. The webhook events go first, from the rows they lock
/// (`FOR UPDATE`), so what they tell is what the updates after them then do, however other transactions race them.
enum DeliveryOutcomeStatements {
    /// One outcome, as `jsonb_to_recordset` reads it.
    struct Outcome: Encodable {
        var store_id: String
        var order_id: UUID
        var id: Int64
        /// The attempt this outcome is of: a row re-claimed meanwhile (its lease ran out) is another attempt's.
        var attempts: Int
        var state: String
        var run_at: Double?
        var status: Int?
        var reason: String?
        var apns_id: String?
        /// The attempt does not count: the app's key was refused, a configuration mistake, not the push's.
        var uncounted: Bool = false
        /// The id of the `delivery.dead` event this outcome writes when it kills the row and an endpoint wants it.
        var dead_event: UUID?
    }

    /// A token APNs said is gone, with the id of the `token.retired` event its retirement writes.
    struct RetiredToken: Encodable {
        var id: Int64
        var reason: String?
        /// APNs's last-valid time: a token registered again after it stays.
        var since: Double?
        var event: UUID
    }

    /// The column list `jsonb_to_recordset` needs for ``Outcome``.
    private static let outcomeColumns: PostgresQuery = """
        store_id text, order_id uuid, id bigint, attempts int, state text, run_at float8, status int, reason text, apns_id uuid,
        uncounted boolean, dead_event uuid
        """

    /// The flight that records `outcomes` and retires `tokens` (their tables by kind) of `tenant`, with their webhook
    /// events: only the statements that have rows to write, so a batch of pushes that went is one `UPDATE`.
    static func recording(
        tenant: String, outcomes: [Outcome], tokens: [TokenTable: [RetiredToken]], now: Date
    ) throws -> [PostgresQuery] {
        let json = try PostgresJSON(encoding: outcomes)
        let activity = try tokens[.activity].map { try PostgresJSON(encoding: $0) }
        let customer = try tokens[.customer].map { try PostgresJSON(encoding: $0) }
        let deadEvents = outcomes.compactMap { $0.state == "dead" ? $0.dead_event : nil }
        let tokenEvents = tokens.values.joined().map(\.event)
        var flight: [PostgresQuery] = []
        if !deadEvents.isEmpty { flight.append(Self.deadEvents(tenant: tenant, json: json, now: now)) }
        if let activity { flight.append(Self.retiredEvents(.activity, tenant: tenant, json: activity, now: now)) }
        if let customer { flight.append(Self.retiredEvents(.customer, tenant: tenant, json: customer, now: now)) }
        if !deadEvents.isEmpty || !tokenEvents.isEmpty {
            flight.append(WebhookOutbox.fanOut(events: deadEvents + tokenEvents, tenant: tenant, at: now))
        }
        flight.append(Self.outcome(tenant: tenant, json: json, now: now))
        if let activity { flight.append(Self.retirement(.activity, tenant: tenant, json: activity, now: now)) }
        if let customer { flight.append(Self.retirement(.customer, tenant: tenant, json: customer, now: now)) }
        return flight
    }

    /// The flight that rescues `rows` of `tenant`, rows in flight whose lease had run out when they were read: each
    /// goes back to pending, or dies when its attempts are used up (`state` says which), still the attempt that was
    /// read; returns one row per row rescued from its last statement.
    static func rescue(tenant: String, rows: [Outcome], now: Date) throws -> [PostgresQuery] {
        let json = try PostgresJSON(encoding: rows)
        let deadEvents = rows.compactMap(\.dead_event)
        let update: PostgresQuery = """
            UPDATE delivery_outbox d
            SET state = r.state, locked_until = NULL,
                last_reason = CASE WHEN r.state = 'dead' THEN r.reason ELSE d.last_reason END,
                finished_at = CASE WHEN r.state = 'dead' THEN \(now)::timestamptz END
            FROM jsonb_to_recordset(\(json)::jsonb) AS r(\(outcomeColumns))
            WHERE d.tenant_id = \(tenant) AND d.store_id = r.store_id AND d.order_id = r.order_id AND d.delivery_id = r.id
              AND d.state = 'inflight' AND d.attempts = r.attempts
            RETURNING 1
            """
        guard !deadEvents.isEmpty else { return [update] }
        return [Self.deadEvents(tenant: tenant, json: json, now: now), WebhookOutbox.fanOut(events: deadEvents, tenant: tenant, at: now), update]
    }

    /// Writes each outcome to its row, when the row is still in flight under the same attempt (a late outcome of an
    /// earlier claim must not overwrite the newer attempt's). A row coming back from a failed attempt is checked
    /// again: a push planned meanwhile, or the order's end, withdraws it for good (`DeliveryOrdering.afterFailure`).
    private static func outcome(tenant: String, json: PostgresJSON, now: Date) -> PostgresQuery {
        """
        UPDATE delivery_outbox d
        SET state = CASE WHEN r.stale IS NOT NULL THEN 'superseded' ELSE r.state END,
            reason_code = coalesce(r.stale, d.reason_code),
            reason = CASE WHEN r.stale IS NOT NULL
                THEN coalesce(\(DeliveryRepository.withdrawalSentences)::jsonb ->> r.stale, r.stale) || ' (Planned as ' || d.reason_code || ': ' || d.reason || ')'
                ELSE d.reason END,
            run_at = coalesce(to_timestamp(r.run_at), d.run_at), locked_until = NULL,
            attempts = CASE WHEN r.uncounted THEN d.attempts - 1 ELSE d.attempts END,
            last_status = coalesce(r.status, d.last_status),
            -- A push that finally went keeps no reason of an earlier failed attempt.
            last_reason = CASE WHEN r.state = 'sent' THEN NULL ELSE coalesce(r.reason, d.last_reason) END,
            apns_id = coalesce(r.apns_id, d.apns_id),
            sent_at = CASE WHEN r.state = 'sent' THEN \(now)::timestamptz ELSE d.sent_at END,
            finished_at = CASE WHEN r.state IN ('sent', 'dead', 'skipped') OR r.stale IS NOT NULL THEN \(now)::timestamptz END
        FROM (
            SELECT r.*, CASE WHEN r.state = 'pending' THEN \(DeliveryOrderingSQL.staleness(tenant: tenant) as PostgresQuery) END AS stale
            FROM jsonb_to_recordset(\(json)::jsonb) AS r(\(outcomeColumns))
            JOIN delivery_outbox d ON d.tenant_id = \(tenant) AND d.store_id = r.store_id AND d.order_id = r.order_id AND d.delivery_id = r.id
        ) r
        WHERE d.tenant_id = \(tenant) AND d.store_id = r.store_id AND d.order_id = r.order_id AND d.delivery_id = r.id
          AND d.state = 'inflight' AND d.attempts = r.attempts
        """
    }

    /// A `delivery.dead` event for each outcome that kills its row (still in flight under the same attempt, locked
    /// here until the transaction ends, so the update after it kills exactly these), when an endpoint wants it.
    private static func deadEvents(tenant: String, json: PostgresJSON, now: Date) -> PostgresQuery {
        """
        INSERT INTO webhook_events (tenant_id, event_id, event_type, store_id, order_id, customer_ref, body, created_at)
        SELECT d.tenant_id, r.dead_event, 'delivery.dead', d.store_id, d.order_id, NULL,
               json_build_object('id', r.dead_event, 'type', 'delivery.dead', 'created_at', \(WebhookOutbox.isoTime("\(now)::timestamptz")),
                   'data', json_build_object('delivery', json_build_object(
                       'id', d.delivery_id, 'order_id', d.order_id, 'store_id', d.store_id, 'push_type', d.push_type, 'target_kind', d.target_kind,
                       'live_activity_event', d.la_event, 'attempts', d.attempts, 'apns_status', coalesce(r.status, d.last_status),
                       'apns_reason', coalesce(r.reason, d.last_reason)))),
               \(now)
        FROM jsonb_to_recordset(\(json)::jsonb) AS r(\(outcomeColumns))
        JOIN delivery_outbox d ON d.tenant_id = \(tenant) AND d.store_id = r.store_id AND d.order_id = r.order_id AND d.delivery_id = r.id
        WHERE r.state = 'dead' AND d.state = 'inflight' AND d.attempts = r.attempts
          AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant_id = \(tenant) AND \(WebhookOutbox.wants(type: "'delivery.dead'", store: "d.store_id")))
        FOR UPDATE OF d
        """
    }

    /// The two token tables: an activity's update tokens (an order's) and a customer's tokens (no order).
    enum TokenTable: Hashable {
        case activity, customer

        /// The table that holds tokens of `kind`.
        init(_ kind: PushTargetKind) {
            self = kind == .liveActivity ? .activity : .customer
        }

        /// The table, its id column, and its order columns as the event tells them.
        var sql: (table: PostgresQuery, id: PostgresQuery, store: PostgresQuery, order: PostgresQuery) {
            switch self {
            case .activity: ("push_targets", "target_id", "t.store_id", "t.order_id")
            case .customer: ("customer_tokens", "token_id", "NULL::text", "NULL::uuid")
            }
        }
    }

    /// Which tokens of `table` a retirement takes: not yet retired, and not registered again after APNs's time.
    private static func retirable(_ table: TokenTable, tenant: String) -> PostgresQuery {
        let sql = table.sql
        return """
            t.tenant_id = \(tenant) AND t.\(sql.id) = r.id AND t.retired_at IS NULL
            AND (r.since IS NULL OR t.updated_at <= to_timestamp(r.since))
            """
    }

    /// A `token.retired` event for each token of `table` the retirement after it takes (locked here), when an
    /// endpoint wants it. Token values are cut to their first 8 characters, as everywhere Crema shows a token.
    private static func retiredEvents(_ table: TokenTable, tenant: String, json: PostgresJSON, now: Date) -> PostgresQuery {
        let sql = table.sql
        return """
            INSERT INTO webhook_events (tenant_id, event_id, event_type, store_id, order_id, customer_ref, body, created_at)
            SELECT t.tenant_id, r.event, 'token.retired', \(sql.store), \(sql.order), t.customer_ref,
                   json_build_object('id', r.event, 'type', 'token.retired', 'created_at', \(WebhookOutbox.isoTime("\(now)::timestamptz")),
                       'data', json_build_object('token', json_build_object(
                           'kind', t.kind, 'token', left(t.token, 8) || '…', 'store_id', \(sql.store), 'order_id', \(sql.order),
                           'customer_ref', t.customer_ref, 'reason', r.reason))),
                   \(now)
            FROM jsonb_to_recordset(\(json)::jsonb) AS r(id bigint, reason text, since float8, event uuid)
            JOIN \(sql.table) t ON \(retirable(table, tenant: tenant))
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant_id = \(tenant) AND \(WebhookOutbox.wants(type: "'token.retired'", store: sql.store)))
            FOR UPDATE OF t
            """
    }

    /// Retires the tokens of `table`: later pushes to them are skipped at claim.
    private static func retirement(_ table: TokenTable, tenant: String, json: PostgresJSON, now: Date) -> PostgresQuery {
        let sql = table.sql
        return """
            UPDATE \(sql.table) t SET retired_at = \(now), retired_reason = r.reason
            FROM jsonb_to_recordset(\(json)::jsonb) AS r(id bigint, reason text, since float8, event uuid)
            WHERE \(retirable(table, tenant: tenant))
            """
    }
}
