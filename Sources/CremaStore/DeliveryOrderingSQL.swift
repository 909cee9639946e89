import CremaPostgres

/// The delivery-ordering rule (docs/delivery.md, "Ordering") as SQL expressions over an outbox row aliased `d`: one
/// activity's pushes reach APNs in order, and none after its end. Written once, here; `DeliveryOrdering` in CremaCore
/// is the same rule in Swift, and `DeliveryOrderingStoreTests` holds the claim that runs these to it.
///
/// Inline `EXISTS` subqueries, each naming the row's tenant, rather than the SQL functions migrations 005 and 007
/// installed (dropped by Migrations/Functions/delivery_ordering.sql): a function that reads the outbox from inside a
/// statement on a Citus shard reads the coordinator's table name, which no shard has, and an inline subquery on the
/// same `tenant_id` is co-located with the row it is about. The tenant is a parameter of each subquery, not the row's
/// column: Citus routes a statement to the tenant's shard only when every table in it is filtered by a value of
/// `tenant_id` (a correlation to another table's column was refused: "could not run distributed query with FOR
/// UPDATE", scripts/citus-test), so a statement using these is about rows of that one tenant.
///
/// A row's sequence: Live Activity pushes to one token (target_kind, target_id) for one order.
enum DeliveryOrderingSQL {
    /// Why the row must never be sent, or NULL while it may:
    /// - `start_order_finished`: a start whose order is picked up or canceled;
    /// - `start_activity_registered`: a start whose order already has an active Live Activity token;
    /// - `superseded_by_end`: a newer row of its sequence, planned and not withdrawn, is an end;
    /// - `superseded_by_newer`: a newer row of its sequence is planned and not withdrawn.
    static func staleness<SQL: PostgresSQL>(tenant: String) -> SQL {
        """
        CASE
            WHEN d.push_type IS DISTINCT FROM 'liveactivity' THEN NULL
            WHEN d.la_event = 'start' AND EXISTS (
                SELECT 1 FROM orders o
                WHERE o.tenant_id = \(tenant) AND o.store_id = d.store_id AND o.order_id = d.order_id
                  AND NOT o.is_open)
                THEN 'start_order_finished'
            WHEN d.la_event = 'start' AND EXISTS (
                SELECT 1 FROM push_targets p
                WHERE p.tenant_id = \(tenant) AND p.store_id = d.store_id AND p.order_id = d.order_id AND p.retired_at IS NULL)
                THEN 'start_activity_registered'
            WHEN EXISTS (
                SELECT 1 FROM delivery_outbox n
                WHERE n.tenant_id = \(tenant) AND n.store_id = d.store_id AND n.order_id = d.order_id AND n.delivery_id > d.delivery_id
                  AND n.push_type = 'liveactivity' AND n.target_kind = d.target_kind AND n.target_id = d.target_id
                  AND n.state IN ('pending', 'inflight', 'sent', 'dead') AND n.la_event = 'end')
                THEN 'superseded_by_end'
            WHEN EXISTS (
                SELECT 1 FROM delivery_outbox n
                WHERE n.tenant_id = \(tenant) AND n.store_id = d.store_id AND n.order_id = d.order_id AND n.delivery_id > d.delivery_id
                  AND n.push_type = 'liveactivity' AND n.target_kind = d.target_kind AND n.target_id = d.target_id
                  AND n.state IN ('pending', 'inflight', 'sent', 'dead'))
                THEN 'superseded_by_newer'
        END
        """
    }

    /// Whether another row of the sequence is pending or in flight: then this one waits (one push per activity at APNs
    /// at a time, oldest first; an older pending row is stale and is withdrawn first).
    static func sequenceBusy<SQL: PostgresSQL>(tenant: String) -> SQL {
        """
        (d.push_type IS NOT DISTINCT FROM 'liveactivity' AND EXISTS (
            SELECT 1 FROM delivery_outbox b
            WHERE b.tenant_id = \(tenant) AND b.store_id = d.store_id AND b.order_id = d.order_id AND b.delivery_id <> d.delivery_id
              AND b.push_type = 'liveactivity' AND b.target_kind = d.target_kind AND b.target_id = d.target_id
              AND b.state IN ('pending', 'inflight')))
        """
    }
}
