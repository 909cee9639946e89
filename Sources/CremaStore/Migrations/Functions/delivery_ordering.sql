-- The delivery-ordering rule (docs/delivery.md, "Ordering"): one activity's pushes reach APNs in order, and none
-- after its end. This file is its one current definition. The migrator applies it after the numbered migrations
-- whenever this text changes (a repeatable migration, recorded with its checksum in schema_repeatables), so change
-- the rule here and nowhere else. Migrations 005 (first version) and 007 (scoped by tenant) are its history; they
-- are checksummed and never edited.
--
-- The rule is decided when a row is claimed and again when a failed attempt would put it back (DeliveryRepository's
-- claim and record), not only when a newer event is planned. CremaCore's DeliveryOrdering is the same rule in Swift:
-- Tests/CremaCoreTests/DeliveryOrderingPropertyTests.swift checks the Swift model, and
-- Tests/CremaStoreTests/DeliveryOrderingStoreTests.swift holds these functions, as installed, to it.
--
-- A row's sequence: Live Activity pushes to one token (target_kind, target_id) for one order. Why the row
-- must never be sent, or NULL while it may:
--   start_order_finished      a start whose order is picked up or canceled
--   start_activity_registered a start whose order already has an active Live Activity token
--   superseded_by_end         a newer row of its sequence, planned and not withdrawn, is an end
--   superseded_by_newer       a newer row of its sequence is planned and not withdrawn
CREATE OR REPLACE FUNCTION delivery_staleness(
    d_tenant text, d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text, d_event text
) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN d_push IS DISTINCT FROM 'liveactivity' THEN NULL
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM orders o
            WHERE o.tenant_id = d_tenant AND o.store_id = d_store AND o.order_id = d_order
              AND o.state IN ('picked_up', 'canceled'))
            THEN 'start_order_finished'
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM push_targets p
            WHERE p.tenant_id = d_tenant AND p.store_id = d_store AND p.order_id = d_order AND p.retired_at IS NULL)
            THEN 'start_activity_registered'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.tenant_id = d_tenant AND n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead') AND n.la_event = 'end')
            THEN 'superseded_by_end'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.tenant_id = d_tenant AND n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead'))
            THEN 'superseded_by_newer'
    END
$$;

-- Whether another row of the sequence is pending or in flight: then this one waits (one push per activity
-- at APNs at a time, oldest first; an older pending row is stale and is withdrawn first).
CREATE OR REPLACE FUNCTION delivery_sequence_busy(
    d_tenant text, d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text
) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT d_push IS NOT DISTINCT FROM 'liveactivity' AND EXISTS (
        SELECT 1 FROM delivery_outbox b
        WHERE b.tenant_id = d_tenant AND b.store_id = d_store AND b.order_id = d_order AND b.delivery_id <> d_id
          AND b.push_type = 'liveactivity' AND b.target_kind = d_kind AND b.target_id = d_target
          AND b.state IN ('pending', 'inflight'))
$$;
