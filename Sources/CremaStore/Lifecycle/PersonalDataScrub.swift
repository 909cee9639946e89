import CremaCore
import CremaPostgres
import Foundation

/// The one statement that removes personal data from orders, shared by erasure and retention so that both remove the
/// same things (docs/data-lifecycle.md): the order's customer ref, display name and free-text reasons, the same keys in
/// its events' `data`, its stored projection (recomputed without the name), its outbox bodies (alert texts and
/// attributes carry the name), its webhook events' bodies, its deliveries' receipts (when the phone got each push), and its Live Activity tokens. Counts, items, states and times stay.
enum PersonalDataScrub {
    /// The `order_events.data` keys that hold personal data (`reason` is free text except on `expired`, a code).
    static let eventKeys = ["customer_ref", "display_name", "reason"]

    /// One order to scrub, with its projection recomputed from the scrubbed order.
    struct Target: Encodable {
        var tenant_id: String
        var store_id: String
        var order_id: UUID
        var projection: String
    }

    /// The scrub target of a row selected with `tenant_id`, `OrderRow.columns`, `store_name` and `store_timezone`.
    /// The projection is the one the order had at its last event, without the name.
    static func target(from row: PostgresRow) throws -> Target {
        let order = try OrderRow.order(from: row).withoutPersonalData()
        let projection = try StoredProjection.json(
            order, storeName: try row.decode("store_name"), timezone: try row.decode("store_timezone"), now: order.updatedAt)
        return Target(tenant_id: try row.decode("tenant_id"), store_id: order.storeID, order_id: order.id, projection: projection.text)
    }

    /// What a transaction that scrubs sets before anything else: `crema.erasure`, the one exception `order_events`'
    /// append-only trigger allows (migration 008), and before it Citus's `propagate_set_commands`. Under Citus the
    /// trigger runs on the worker that holds the shard, and Citus passes a transaction's `SET LOCAL` on to the workers
    /// only when that is on; without it the trigger there would never see the erasure (docs/scaling.md). On plain
    /// PostgreSQL the first is a placeholder setting that nothing reads. Two statements, because Citus forwards
    /// `SET LOCAL` commands, not `set_config` calls.
    static let erasureSettings: [PostgresQuery] = [
        "SET LOCAL citus.propagate_set_commands = 'local'",
        "SET LOCAL crema.erasure = 'on'",
    ]

    /// The select list that `target(from:)` reads, over `tenant`'s `orders` (unaliased). The tenant is named on every
    /// table, as in every statement here: Citus runs a statement on one shard only then (docs/scaling.md).
    static func selectList(tenant: String) -> PostgresQuery {
        """
        tenant_id, \(unescaped: OrderRow.columns), \(OrderStatements.storeColumns(tenant: tenant) as PostgresQuery)
        """
    }

    /// CTEs `p` (the targets), `scrubbed_orders`, `scrubbed_events`, `scrubbed_deliveries`, `scrubbed_webhook_events` (the
    /// order and token objects in webhook bodies, still to be sent or not), `removed_receipts` and `removed_activity_tokens`,
    /// to follow `WITH` and be followed by more CTEs or the final SELECT (after a comma). The transaction must have
    /// run `erasureSettings`, the one exception `order_events`' trigger allows. Pending pushes of these orders
    /// are withdrawn (`superseded`): their tokens are gone.
    static func ctes(_ targets: [Target], tenant: String, at now: Date) throws -> PostgresQuery {
        let keys = PostgresTextArray(eventKeys)
        return """
        p AS (
            SELECT * FROM jsonb_to_recordset(\(try PostgresJSON(encoding: targets))::jsonb)
                AS p(tenant_id text, store_id text, order_id uuid, projection text)
        ), scrubbed_orders AS (
            UPDATE orders o SET customer_ref = NULL, display_name = '', delay_reason = NULL, cancel_reason = NULL,
                   projection = p.projection::jsonb, personal_data_removed_at = \(now)
            FROM p WHERE o.tenant_id = \(tenant) AND o.store_id = p.store_id AND o.order_id = p.order_id
            RETURNING 1
        ), scrubbed_events AS (
            UPDATE order_events e SET data = (
                SELECT jsonb_object_agg(key, CASE WHEN key = ANY(\(keys)::text[]) THEN 'null'::jsonb ELSE value END)
                FROM jsonb_each(e.data))
            FROM p WHERE e.tenant_id = \(tenant) AND e.store_id = p.store_id AND e.order_id = p.order_id
              AND e.event_type <> 'expired' AND e.data ?| \(keys)::text[]
            RETURNING 1
        ), scrubbed_deliveries AS (
            UPDATE delivery_outbox d SET body = NULL,
                   state = CASE WHEN d.state = 'pending' THEN 'superseded' ELSE d.state END,
                   finished_at = CASE WHEN d.state = 'pending' THEN \(now) ELSE d.finished_at END
            FROM p WHERE d.tenant_id = \(tenant) AND d.store_id = p.store_id AND d.order_id = p.order_id
              AND (d.body IS NOT NULL OR d.state = 'pending')
            RETURNING 1
        ), scrubbed_webhook_events AS (
            UPDATE webhook_events w SET customer_ref = NULL, body = \(WebhookOutbox.redactedBody("w.body"))
            FROM p WHERE w.tenant_id = \(tenant) AND w.store_id = p.store_id AND w.order_id = p.order_id
            RETURNING 1
        ), removed_receipts AS (
            DELETE FROM delivery_receipts r USING p
            WHERE r.tenant_id = p.tenant_id AND r.store_id = p.store_id AND r.order_id = p.order_id
            RETURNING 1
        ), removed_activity_tokens AS (
            DELETE FROM push_targets t USING p
            WHERE t.tenant_id = \(tenant) AND t.store_id = p.store_id AND t.order_id = p.order_id
            RETURNING 1
        )
        """
    }
}
