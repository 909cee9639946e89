import CremaCore
import CremaPostgres
import Foundation

/// The SQL that writes webhook events where their facts are written: in the order event's statement (`order.changed`,
/// `activity.ended`) and in the dispatcher's outcome flight (`delivery.dead`, `token.retired`, written by
/// `DeliveryOutcomeStatements`, fanned out here). An event is stored
/// only when a live endpoint of the tenant wants its type and store, and fanned out to each such endpoint.
enum WebhookOutbox {
    /// Whether endpoint `e` (unqualified columns under alias `e`) wants an event of `type` in `store` (SQL
    /// expressions; a NULL store, such as a customer's token, reaches only endpoints for every store).
    static func wants<SQL: PostgresSQL>(type: SQL, store: SQL) -> SQL {
        "e.disabled_at IS NULL AND \(type) = ANY(e.events) AND (e.stores IS NULL OR \(store) = ANY(e.stores))"
    }

    /// A column `webhooks_wanted` for the command's first round trip: whether a live endpoint of `tenant` wants an event
    /// an order command writes (`order.changed`, `activity.ended`) of `store` (an SQL expression). When none does, the
    /// write leaves the webhook CTEs out (``orderCTEs`` of no draft): under Citus each of them is an `INSERT … SELECT`
    /// it pulls to the coordinator, and any such insert, even of no row, commits the transaction in two phases. An
    /// endpoint created between the two round trips misses that one command's event, as one created just after it.
    static func wantedColumn<SQL: PostgresSQL>(tenant: String, store: SQL) -> SQL {
        let types = PostgresTextArray([WebhookEventType.orderChanged, .activityEnded].map(\.rawValue))
        return """
            EXISTS (
                SELECT 1 FROM webhook_endpoints e
                WHERE e.tenant_id = \(tenant) AND e.disabled_at IS NULL AND e.events && \(types)::text[]
                  AND (e.stores IS NULL OR \(store) = ANY(e.stores))
            ) AS webhooks_wanted
            """
    }

    /// CTEs `hook_events` and `hook_deliveries` writing `drafts` about one order, each after a comma (to follow other
    /// CTEs); nothing for no draft. Neither reads the other's rows, nor does ``queued`` read theirs: under Citus a CTE
    /// whose rows another part of the statement reads is run apart and its rows copied to every worker, which made every
    /// order's transaction reach every worker group (docs/scaling.md, "On a running cluster"). Each reads the drafts
    /// and the endpoints instead: a delivery is queued for each endpoint that wants a draft, and the draft is stored
    /// when one does.
    static func orderCTEs<SQL: PostgresSQL>(
        _ drafts: [WebhookDraft], tenant: String, store: String, orderID: UUID, customerRef: String?, at: Date
    ) -> SQL {
        guard !drafts.isEmpty else { return "" }
        // Each draft's fields are parameters of their own: wrapping the bodies (the order, about 1 KB) in one JSON
        // document escaped every byte again and was 1.7 % of crema serve's samples under ingest.
        let rows: SQL = "VALUES \(SQL(joining: drafts.map { draft -> SQL in "(\(draft.id)::uuid, \(draft.type.rawValue)::text, \(draft.body)::text)" }, separator: ", "))"
        return """
            , hook_events AS (
                INSERT INTO webhook_events (tenant_id, event_id, event_type, store_id, order_id, customer_ref, body, created_at)
                SELECT \(tenant), x.id, x.type, \(store), \(orderID), \(customerRef), x.body::json, \(at)
                FROM (\(rows)) AS x(id, type, body)
                WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.tenant_id = \(tenant) AND \(wants(type: "x.type", store: "\(store)::text")))
            ), hook_deliveries AS (
                INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
                SELECT \(tenant), e.endpoint_id, x.id, \(at), \(at)
                FROM (\(kinds(drafts) as SQL)) AS x(id, type) JOIN webhook_endpoints e ON e.tenant_id = \(tenant) AND \(wants(type: "x.type", store: "\(store)::text"))
            )
            """
    }

    /// The drafts' ids and types, as rows (none for no draft).
    private static func kinds<SQL: PostgresSQL>(_ drafts: [WebhookDraft]) -> SQL {
        drafts.isEmpty
            ? "SELECT NULL::uuid, NULL::text WHERE false"
            : "VALUES \(SQL(joining: drafts.map { draft -> SQL in "(\(draft.id)::uuid, \(draft.type.rawValue)::text)" }, separator: ", "))"
    }

    /// The column of ``queued``.
    static let queuedColumn = "webhooks_queued"
    /// A column ``queuedColumn``: whether ``orderCTEs`` queued a delivery of `drafts`, read from the endpoints (the same
    /// condition `hook_deliveries` inserts on), so the statement ends with a read of the tenant's own table.
    static func queued<SQL: PostgresSQL>(_ drafts: [WebhookDraft], tenant: String, store: String) -> SQL {
        guard !drafts.isEmpty else { return "false AS webhooks_queued" }
        return """
        EXISTS (
            SELECT 1 FROM (\(kinds(drafts) as SQL)) AS x(id, type)
            JOIN webhook_endpoints e ON e.tenant_id = \(tenant) AND \(wants(type: "x.type", store: "\(store)::text"))
        ) AS webhooks_queued
        """
    }

    /// A timestamp as the API writes it (UTC, milliseconds, `Z`), for bodies built in SQL.
    static func isoTime(_ expression: PostgresQuery) -> PostgresQuery {
        "to_char(\(expression) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
    }

    /// One delivery per endpoint that wants each of `events` (ids of events the flight wrote before this statement;
    /// an id whose event was not written, no endpoint wanting it, queues nothing). A statement of its own, reading the
    /// events back from their table, so under Citus it runs on the tenant's shard alone (`DeliveryOutcomeStatements`).
    static func fanOut(events: [UUID], tenant: String, at now: Date) -> PostgresQuery {
        let ids = PostgresTextArray(events.map { $0.uuidString.lowercased() })
        return """
            INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
            SELECT h.tenant_id, e.endpoint_id, h.event_id, \(now), \(now)
            FROM webhook_events h
            JOIN webhook_endpoints e ON e.tenant_id = h.tenant_id AND \(wants(type: "h.event_type", store: "h.store_id") as PostgresQuery)
            WHERE h.tenant_id = \(tenant) AND h.event_id = ANY(\(ids)::uuid[])
            """
    }

    /// A webhook body (a `json` expression) without personal data: in an `order` object the customer ref, the display
    /// name and the free-text reasons (as `Order.withoutPersonalData` leaves them), in a `token` object the customer
    /// ref. Everything else stays, so a redacted event still tells what happened.
    static func redactedBody(_ body: PostgresQuery) -> PostgresQuery {
        """
        (SELECT CASE
            WHEN b #> '{data,order}' IS NOT NULL THEN
                jsonb_set(jsonb_set(jsonb_set(jsonb_set(b, '{data,order,customer_ref}', 'null'), '{data,order,display_name}', '""'),
                          '{data,order,delay_reason}', 'null'), '{data,order,cancel_reason}', 'null')::json
            WHEN b #> '{data,token}' IS NOT NULL THEN jsonb_set(b, '{data,token,customer_ref}', 'null')::json
            ELSE b::json END
         FROM (SELECT (\(body))::jsonb AS b) x)
        """
    }
}
