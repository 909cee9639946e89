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

    /// The event types an order command writes.
    static let orderEventTypes = [WebhookEventType.orderChanged, .activityEnded]

    /// A column `webhook_endpoints` for the command's first round trip: the live endpoints of `tenant` that want an event
    /// an order command writes in `store` (an SQL expression), with the types each wants, as JSON (NULL for none; at most
    /// the tenant's webhook limit). The write then names them (``orderCTEs``) rather than finding them itself: under
    /// Citus an `INSERT … SELECT` that finds them is pulled to the coordinator, and any such insert, even of no row,
    /// commits the transaction in two phases. An endpoint created between the two round trips misses that one
    /// command's event, as one created just after it; one deleted between them fails the write (``endpointGone``).
    static func endpointsColumn<SQL: PostgresSQL>(tenant: String, store: SQL) -> SQL {
        let types = PostgresTextArray(orderEventTypes.map(\.rawValue))
        return """
            (SELECT json_agg(json_build_object('id', e.endpoint_id, 'events', e.events) ORDER BY e.endpoint_id)
             FROM webhook_endpoints e
             WHERE e.tenant_id = \(tenant) AND e.disabled_at IS NULL AND e.events && \(types)::text[]
               AND (e.stores IS NULL OR \(store) = ANY(e.stores))) AS webhook_endpoints
            """
    }

    /// The endpoints of ``endpointsColumn`` in `row`.
    static func endpoints(from row: PostgresRow) throws -> [WantingEndpoint] {
        try row.decode("webhook_endpoints", as: PostgresJSON?.self)?.decode([WantingEndpoint].self) ?? []
    }

    /// Whether `error` is the write's delivery naming an endpoint deleted since the command read it: the command is
    /// run again (`CremaDatabase.command`), and reads the endpoints anew. Known by the constraint's name, which Citus
    /// does not relay from the worker as a field of its own but in the message, with the shard's number after it.
    static func endpointGone(_ error: PostgresError) -> Bool {
        let name = "webhook_deliveries_tenant_id_endpoint_id_fkey"
        return error.sqlState == PostgresError.SQLState.foreignKeyViolation
            && ((error.constraint?.hasPrefix(name) ?? false) || error.detail.contains("\"\(name)"))
    }

    /// What an order command's drafts become, given the endpoints that want them: each draft some endpoint wants is
    /// stored once, with one delivery per endpoint that wants it. Pure, so the write's shape is known before it is sent.
    struct OrderFanOut: Sendable {
        var events: [WebhookDraft]
        var deliveries: [(endpoint: UUID, event: UUID)]

        init(_ drafts: [WebhookDraft], endpoints: [WantingEndpoint]) {
            events = []
            deliveries = []
            for draft in drafts {
                let wanting = endpoints.filter { $0.events.contains(draft.type.rawValue) }
                guard !wanting.isEmpty else { continue }
                events.append(draft)
                deliveries += wanting.map { (endpoint: $0.id, event: draft.id) }
            }
        }
    }

    /// CTEs `hook_events` and `hook_deliveries` writing `fanOut` about one order, each after a comma (to follow other
    /// CTEs); nothing when no endpoint wants a draft. Plain `VALUES`, which Citus routes to the tenant's shard, and
    /// neither reads the other's rows (Citus copies rows one part of a statement reads from another to every worker).
    static func orderCTEs<SQL: PostgresSQL>(
        _ fanOut: OrderFanOut, tenant: String, store: String, orderID: UUID, customerRef: String?, at: Date
    ) -> SQL {
        guard !fanOut.events.isEmpty else { return "" }
        // Each draft's fields are parameters of their own: wrapping the bodies (the order, about 1 KB) in one JSON
        // document escaped every byte again and was 1.7 % of crema serve's samples under ingest.
        let events = fanOut.events.map { draft -> SQL in
            "(\(tenant), \(draft.id)::uuid, \(draft.type.rawValue), \(store), \(orderID), \(customerRef), \(draft.body)::json, \(at))"
        }
        let deliveries = fanOut.deliveries.map { pair -> SQL in "(\(tenant), \(pair.endpoint)::uuid, \(pair.event)::uuid, \(at), \(at))" }
        return """
            , hook_events AS (
                INSERT INTO webhook_events (tenant_id, event_id, event_type, store_id, order_id, customer_ref, body, created_at)
                VALUES \(SQL(joining: events, separator: ", "))
            ), hook_deliveries AS (
                INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, run_at, created_at)
                VALUES \(SQL(joining: deliveries, separator: ", "))
            )
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
