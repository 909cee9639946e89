import CremaAPNsProtocol
import CremaCore
import CremaPostgres
import Foundation

/// The SQL around the pure planner: what it reads (the order's targets and their last day of decisions, in the
/// same statement that locks the order) and what it writes (outbox rows and supersessions, in the same
/// statement that appends the event).
enum DeliveryPlanning {
    /// How far back the planner looks: the widget cap counts a rolling day.
    static let historyWindow: TimeInterval = 24 * 60 * 60

    /// A CTE body listing the active targets of `tenant`'s order (a CTE named `o` with `store_id`, `order_id`,
    /// `customer_ref`), each table named with its tenant (on Citus, every read goes to the tenant's shard with no
    /// inference), as `kind, id, environment, registered_at, bundle_id, frequent_updates` (the last true
    /// for every customer token: only a Live Activity registration says otherwise). A token's app is the one
    /// it registered with, else `defaultBundleID` (given for the default tenant only: `CREMA_APNS_TOPIC`), else the
    /// tenant's default app.
    static func targets<SQL: PostgresSQL>(tenant: String, defaultBundleID: String?) -> SQL {
        """
        SELECT 'live_activity' AS kind, p.target_id AS id, p.environment, extract(epoch FROM p.updated_at)::float8 AS registered_at,
               coalesce(p.bundle_id, \(defaultBundleID), (SELECT default_bundle_id FROM tenants WHERE tenant_id = \(tenant))) AS bundle_id,
               p.frequent_updates
        FROM push_targets p, o
        WHERE p.tenant_id = \(tenant) AND p.store_id = o.store_id AND p.order_id = o.order_id AND p.retired_at IS NULL
        UNION ALL
        SELECT c.kind, c.token_id, c.environment, extract(epoch FROM c.updated_at)::float8,
               coalesce(c.bundle_id, \(defaultBundleID), (SELECT default_bundle_id FROM tenants WHERE tenant_id = \(tenant))), true
        FROM customer_tokens c, o WHERE c.tenant_id = \(tenant) AND c.customer_ref = o.customer_ref AND c.retired_at IS NULL
        """
    }

    /// The select-list columns `targets` and `history` (JSON arrays, `tenant`'s decisions of the last `historyWindow`
    /// before `now`) over a CTE named `t`.
    ///
    /// The history is read target by target (a lateral subquery kept apart by `OFFSET 0`, so the planner cannot turn
    /// the join around): each lookup reads that target's rows (`delivery_outbox_target_history`), never the tenant's. As a
    /// plain join, the generic plan a connection cached while the outbox was small walked every outbox row of the
    /// tenant for each event once it had grown (5.6 ms an event after 15 s of load, growing with the table).
    ///
    /// `beforeLastChange` reads the history as the order's last event found it (`GET /v1/orders/{id}/preview` plans that
    /// change again): without the rows that event wrote (the order's, at its current version), and with the rows it
    /// superseded (the order's, superseded at the order's `updated_at`, the event's time) still pending. `o` then also
    /// names `order_id`, `version` and `updated_at`.
    static func selectColumns<SQL: PostgresSQL>(tenant: String, now: Date, beforeLastChange: Bool = false) -> SQL {
        let since = now.addingTimeInterval(-historyWindow)
        let state: SQL = beforeLastChange
            ? """
              CASE WHEN d.state = 'superseded' AND d.order_id = (SELECT order_id FROM o) AND d.finished_at = (SELECT updated_at FROM o)
                   THEN 'pending' ELSE d.state END
              """
            : "d.state"
        let lastChange: SQL = beforeLastChange
            ? "WHERE NOT (d.order_id = (SELECT order_id FROM o) AND d.order_version = (SELECT version FROM o))"
            : ""
        return """
        (SELECT coalesce(json_agg(t), '[]') FROM t) AS targets,
        (SELECT coalesce(json_agg(h), '[]') FROM (
            SELECT d.delivery_id AS id, d.target_kind AS kind, d.target_id AS target, d.order_id, d.push_type, d.la_event,
                   d.priority, \(state) AS state, extract(epoch FROM d.created_at)::float8 AS planned_at,
                   extract(epoch FROM d.run_at)::float8 AS run_at, d.apns_timestamp
            FROM t CROSS JOIN LATERAL (
                SELECT * FROM delivery_outbox d
                WHERE d.tenant_id = \(tenant) AND d.target_kind = t.kind AND d.target_id = t.id AND d.created_at > \(since)
                OFFSET 0
            ) d
            \(lastChange)
        ) h) AS history
        """
    }

    private struct TargetRow: Decodable {
        var kind: String
        var id: Int64
        var environment: String
        var registered_at: Double
        var bundle_id: String?
        var frequent_updates: Bool?
    }

    private struct HistoryRow: Decodable {
        var id: Int64
        var kind: String
        var target: Int64
        var order_id: UUID
        var push_type: String?
        var la_event: String?
        var priority: Int?
        var state: String
        var planned_at: Double
        var run_at: Double
        var apns_timestamp: Int64?
    }

    static func targets(from row: PostgresRow) throws -> [PushTarget] {
        try row.decode("targets", as: PostgresJSON.self).decode([TargetRow].self).compactMap { target in
            // A token without an app cannot be signed for; registration refuses those outside the default tenant.
            guard let kind = PushTargetKind(rawValue: target.kind), let environment = APNsEnvironment(rawValue: target.environment),
                let bundleID = target.bundle_id
            else { return nil }
            return PushTarget(
                ref: PushTargetRef(kind: kind, id: target.id), environment: environment,
                registeredAt: Date(timeIntervalSince1970: target.registered_at), bundleID: bundleID,
                frequentUpdates: target.frequent_updates ?? true)
        }
    }

    static func history(from row: PostgresRow) throws -> [DeliveryRecord] {
        try row.decode("history", as: PostgresJSON.self).decode([HistoryRow].self).compactMap { record in
            guard let kind = PushTargetKind(rawValue: record.kind), let pushType = record.push_type.flatMap(APNsPushType.init),
                let state = DeliveryState(rawValue: record.state)
            else { return nil }
            return DeliveryRecord(
                id: record.id, target: PushTargetRef(kind: kind, id: record.target), orderID: record.order_id,
                pushType: pushType, liveActivityEvent: record.la_event.flatMap(LiveActivityEvent.init), priority: record.priority,
                state: state, plannedAt: Date(timeIntervalSince1970: record.planned_at),
                runAt: Date(timeIntervalSince1970: record.run_at), apnsTimestamp: record.apns_timestamp)
        }
    }

    /// Outbox rows per statement: a row binds up to 14 parameters and PostgreSQL takes at most 65,535 in one
    /// statement, so a plan with more rows (a tenant whose limits allow thousands of tokens) is written in several
    /// statements of the same round trip, never refused. Far above what the default limits allow (20 tokens per kind).
    static let rowsPerStatement = 2_000

    /// The plan's outbox rows for `order`, each a `VALUES` row with every field a parameter of its own: as one JSON
    /// document, every APNs body (up to 4 KB of JSON) was escaped again and parsed back by the server, and the rows were
    /// about 1.5 % of `crema serve`'s samples under ingest even with no body at all (the webhook drafts went the same
    /// way). The statement's text differs with the number of rows, a handful of shapes, each built once
    /// (`OrderStatements.Write`) and prepared once per connection. `range` indexes the deliveries, then the skips.
    static func rows<SQL: PostgresSQL>(
        _ plan: DeliveryPlan, order: Order, tenant: String, event: OrderEventType, targets: [PushTarget], at: Date, in range: Range<Int>
    ) -> [SQL] {
        let apps = Dictionary(targets.map { ($0.ref, $0.bundleID) }, uniquingKeysWith: { first, _ in first })
        // The order's columns, the same in every row.
        let head: SQL = "\(tenant), \(order.storeID), \(order.id), \(order.version), \(event.rawValue)"
        var rows: [SQL] = []
        rows.reserveCapacity(range.count)
        for d in plan.deliveries[range.clamped(to: plan.deliveries.indices)] {
            rows.append(
                """
                (\(head), \(d.target.kind.rawValue)::text, \(d.target.id)::bigint, \(d.pushType.rawValue)::text, \(d.priority)::smallint,
                 \(d.topic)::text, \(d.collapseID)::text, \(d.body.string)::text, \(d.expiration)::timestamptz, 'pending',
                 \(d.reason.rawValue)::text, \(d.sentence)::text, \(d.notBefore)::timestamptz, \(d.liveActivityEvent?.rawValue)::text,
                 \(d.apnsTimestamp)::bigint, \(apps[d.target])::text, \(at), NULL)
                """)
        }
        let skips = (range.lowerBound - plan.deliveries.count)..<(range.upperBound - plan.deliveries.count)
        for s in plan.skips[skips.clamped(to: plan.skips.indices)] {
            rows.append(
                """
                (\(head), \(s.target?.kind.rawValue)::text, \(s.target?.id)::bigint, \(s.pushType?.rawValue)::text, NULL,
                 NULL, NULL, NULL, NULL, 'skipped', \(s.reason.rawValue)::text, \(s.sentence)::text,
                 \(at)::timestamptz, NULL, NULL, NULL, \(at), \(at)::timestamptz)
                """)
        }
        return rows
    }

    /// The `INSERT` of `rows` (at least one) into the outbox: the body of the CTE `outbox`, or a statement of its own
    /// for the rows past `rowsPerStatement`. Plain `VALUES`, not `INSERT … SELECT`: Citus routes a `VALUES` insert to
    /// the tenant's shard (drawing `delivery_id` from the coordinator's sequence), while it pulls an `INSERT … SELECT`
    /// that needs the sequence to the coordinator and writes its rows with `COPY`, which always commits in two phases.
    static func insert<SQL: PostgresSQL>(_ rows: [SQL]) -> SQL {
        """
        INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                     push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                     run_at, la_event, apns_timestamp, bundle_id, created_at, finished_at)
        VALUES \(SQL(joining: rows, separator: ", "))
        """
    }

    /// How many of `plan`'s outbox rows the statement that appends the event writes: its first deliveries, then skips.
    static func firstRows(_ plan: DeliveryPlan) -> (deliveries: Int, skips: Int) {
        let deliveries = min(plan.deliveries.count, rowsPerStatement)
        return (deliveries, min(plan.skips.count, rowsPerStatement - deliveries))
    }

    /// What writes `plan` for `order` in the statement that appends the event: CTEs named `outbox` (none when the plan
    /// has no row) and `superseded` (to follow other CTEs with a comma) holding the first `rowsPerStatement` rows;
    /// ``more`` writes the others.
    static func ctes<SQL: PostgresSQL>(
        _ plan: DeliveryPlan, order: Order, tenant: String, targets: [PushTarget], event: OrderEventType, at: Date
    ) -> SQL {
        let first: [SQL] = rows(
            plan, order: order, tenant: tenant, event: event, targets: targets, at: at,
            in: 0..<min(plan.deliveries.count + plan.skips.count, rowsPerStatement))
        let superseded = PostgresTextArray(plan.superseded.map(String.init))
        // No outbox rows (an event that plans nothing): no insert at all.
        let outbox: SQL = first.isEmpty ? "" : "outbox AS (\n    \(insert(first) as SQL)\n), "
        return """
            \(outbox)superseded AS (
                -- The ids as an array beside the tenant: at worst a walk over its unfinished rows (delivery_outbox_due),
                -- never (as the join with a subquery did under a cached generic plan) over every outbox row of the store.
                UPDATE delivery_outbox SET state = 'superseded', finished_at = \(at)
                WHERE tenant_id = \(tenant) AND finished_at IS NULL AND store_id = \(order.storeID)
                  AND delivery_id = ANY(\(superseded)::bigint[]) AND state = 'pending'
            )
            """
    }

    /// A statement for each batch of `plan`'s outbox rows past the first `rowsPerStatement`, to send in the same round
    /// trip as the one that appends the event (none for a plan of fewer rows: every default limit).
    static func more(
        _ plan: DeliveryPlan, order: Order, tenant: String, targets: [PushTarget], event: OrderEventType, at: Date
    ) -> [PostgresQuery] {
        let count = plan.deliveries.count + plan.skips.count
        return stride(from: rowsPerStatement, to: count, by: rowsPerStatement).map { start in
            insert(rows(plan, order: order, tenant: tenant, event: event, targets: targets, at: at, in: start..<min(start + rowsPerStatement, count)))
        }
    }
}
