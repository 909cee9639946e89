-- Crema schema 005: one activity's pushes reach APNs in order, and none after its end (docs/delivery.md,
-- "Ordering"). The rule is decided when a row is claimed and again when a failed attempt would put it back,
-- not only when a newer event is planned; CremaCore's DeliveryOrdering is the same rule, property-tested.
--
-- A row's sequence: Live Activity pushes to one token (target_kind, target_id) for one order. Why the row
-- must never be sent, or NULL while it may:
--   start_order_finished      a start whose order is picked up or canceled
--   start_activity_registered a start whose order already has an active Live Activity token
--   superseded_by_end         a newer row of its sequence, planned and not withdrawn, is an end
--   superseded_by_newer       a newer row of its sequence is planned and not withdrawn
CREATE FUNCTION delivery_staleness(
    d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text, d_event text
) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN d_push IS DISTINCT FROM 'liveactivity' THEN NULL
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM orders o
            WHERE o.store_id = d_store AND o.order_id = d_order AND o.state IN ('picked_up', 'canceled'))
            THEN 'start_order_finished'
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM push_targets p
            WHERE p.store_id = d_store AND p.order_id = d_order AND p.retired_at IS NULL)
            THEN 'start_activity_registered'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead') AND n.la_event = 'end')
            THEN 'superseded_by_end'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead'))
            THEN 'superseded_by_newer'
    END
$$;

-- Whether another row of the sequence is pending or in flight: then this one waits (one push per activity
-- at APNs at a time, oldest first; an older pending row is stale and is withdrawn first).
CREATE FUNCTION delivery_sequence_busy(
    d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text
) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT d_push IS NOT DISTINCT FROM 'liveactivity' AND EXISTS (
        SELECT 1 FROM delivery_outbox b
        WHERE b.store_id = d_store AND b.order_id = d_order AND b.delivery_id <> d_id
          AND b.push_type = 'liveactivity' AND b.target_kind = d_kind AND b.target_id = d_target
          AND b.state IN ('pending', 'inflight'))
$$;
