-- bench/ingest.pgbench.sql grouped into round trips as Crema groups it: the same statements, text for text, in
-- pgbench pipelines (\startpipeline ... \endpipeline). Read that file's header first: the deviations from
-- Crema's statements listed there hold here too. Run with -M prepared (pgbench pipelines need the extended
-- protocol; Crema prepares each statement once per connection).
--
-- How Crema groups an event's statements (Sources/CremaPostgres/PostgresConnection.swift, pipeline mode): a
-- flight queues its statements (PQsendQueryPrepared each, BEGIN first when the transaction has not started),
-- ends them with one PQpipelineSync and waits once for every answer -- one round trip per flight:
--   flight 1  BEGIN ISOLATION LEVEL READ COMMITTED + the reads: for placed, the key claim and the store's
--             UPDATE ... RETURNING with the planning reads (openPlacement); for a later event, the order's
--             SELECT ... FOR UPDATE with the planning reads and the key claim (openOrder);
--   (the core decides, in Swift)
--   flight 2  the write statement + COMMIT (writeAndCommit).
-- Here one \startpipeline ... \endpipeline is one such flight: pgbench sends the statements between them
-- without waiting, syncs once at \endpipeline and reads every answer -- the same messages (Bind, Describe,
-- Execute per statement, one Sync) as Crema's flight.
--
-- Where the grouping cannot be Crema's: pgbench refuses \gset inside a pipeline ("\gset is not allowed in
-- pipeline mode", pgbench 15), and the placed event's write inserts the number that the store's UPDATE
-- returns. So for placed, flight 1 is split: BEGIN and the claim go in one pipeline, and the store's UPDATE
-- (with \gset) follows on a round trip of its own, before the write + COMMIT pipeline. A placed event costs 3
-- round trips here against Crema's 2; started, ready and picked_up cost 2, as in Crema (their writes need
-- nothing from their reads: the store, the ETA and the barista they bind are the values the earlier events
-- wrote, which pgbench already holds, so the locked SELECT's answer is read and discarded, as inside a
-- pipeline it must be). Over a lifecycle that is 9 round trips against Crema's 8: this side is slightly
-- slower than Crema's grouping would be, so the ratio HTTP/pipelined flatters HTTP a little.
-- The statement order inside each flight is Crema's.
--
-- Held to Crema's statements as bench/ingest.pgbench.sql is (its header's last paragraph): bench/ingest.sh compares
-- both files with what crema sends before each run and refuses to run when either differs. Change both together.

\if :stage = 0
-- ---- placed: OrderTransaction.openPlacement, then insertPlaced ----
\set st random(1, 8)
\set oid random(1, 9000000000000000000)
\set key random(1, 9000000000000000000)
-- flight 1, as Crema: BEGIN and the claim in one round trip; then the store read in a round trip of its
-- own, because pgbench refuses gset inside a pipeline (Crema sends it in the same flight).
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
VALUES ('default', ('s' || :st), 'pos', :key, 'POST /v1/orders', :placed_request, 0, '', now()::timestamptz)
ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = EXCLUDED.created_at
    WHERE idempotency_keys.created_at < now() - interval '86400 seconds'
RETURNING 1;
\endpipeline
WITH s AS (
    UPDATE stores SET next_order_number = next_order_number + 1, stream_position = stream_position + 1
    WHERE tenant_id = 'default' AND (NULL::text[] IS NULL OR store_id = ANY(NULL::text[])) AND store_id = ('s' || :st)
    RETURNING tenant_id, store_id, next_order_number - 1 AS number, name, timezone, stream_position
), o AS (
    SELECT s.tenant_id, s.store_id, NULL::uuid AS order_id, ('c-' || :oid)::text AS customer_ref FROM s
), t AS (SELECT 'live_activity' AS kind, p.target_id AS id, p.environment, extract(epoch FROM p.updated_at)::float8 AS registered_at,
       coalesce(p.bundle_id, 'cafe.crema.example', (SELECT default_bundle_id FROM tenants WHERE tenant_id = 'default')) AS bundle_id,
       p.frequent_updates
FROM push_targets p, o
WHERE p.tenant_id = 'default' AND p.store_id = o.store_id AND p.order_id = o.order_id AND p.retired_at IS NULL
UNION ALL
SELECT c.kind, c.token_id, c.environment, extract(epoch FROM c.updated_at)::float8,
       coalesce(c.bundle_id, 'cafe.crema.example', (SELECT default_bundle_id FROM tenants WHERE tenant_id = 'default')), true
FROM customer_tokens c, o WHERE c.tenant_id = 'default' AND c.customer_ref = o.customer_ref AND c.retired_at IS NULL)
SELECT s.number, s.name, s.timezone, s.stream_position, (SELECT json_agg(json_build_object('id', e.endpoint_id, 'events', e.events) ORDER BY e.endpoint_id)
 FROM webhook_endpoints e
 WHERE e.tenant_id = 'default' AND e.disabled_at IS NULL AND e.events && '{order.changed,activity.ended}'::text[]
   AND (e.stores IS NULL OR s.store_id = ANY(e.stores))) AS webhook_endpoints,
       (SELECT coalesce(json_agg(t), '[]') FROM t) AS targets,
(SELECT coalesce(json_agg(h), '[]') FROM (
    SELECT d.delivery_id AS id, d.target_kind AS kind, d.target_id AS target, d.order_id, d.push_type, d.la_event,
           d.priority, d.state AS state, extract(epoch FROM d.created_at)::float8 AS planned_at,
           extract(epoch FROM d.run_at)::float8 AS run_at, d.apns_timestamp
    FROM t CROSS JOIN LATERAL (
        SELECT * FROM delivery_outbox d
        WHERE d.tenant_id = 'default' AND d.target_kind = t.kind AND d.target_id = t.id AND d.created_at > now() - interval '24 hours'
        OFFSET 0
    ) d
) h) AS history
FROM s \gset
-- flight 2, as Crema: the write and COMMIT in one round trip.
\startpipeline
WITH inserted AS (
    INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items,
                        state, version, eta, placed_at, updated_at, projection)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, :number, ('T-' || :oid), ('c-' || :oid),
            'Ana', 'en', :items::jsonb,
            'queued', 1, :eta, now(), now(), :proj_queued::jsonb)
), event AS (
    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 1, 'placed', :placed_data::jsonb,
            'pos', :key, now(), (SELECT stream_position FROM stores p WHERE p.tenant_id = 'default' AND p.store_id = ('s' || :st)))
), answer AS (
    UPDATE idempotency_keys SET response_status = 201, response_body = :resp_queued
WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND scope = 'pos' AND idempotency_key = :key
), board AS (
    INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
    SELECT tenant_id, store_id, 5, now()::timestamptz + make_interval(secs => 1)
    FROM store_channels WHERE tenant_id = 'default' AND store_id = ('s' || :st)
    ON CONFLICT (tenant_id, store_id) DO UPDATE
        SET changes = broadcast_outbox.changes + 1, priority = greatest(broadcast_outbox.priority, EXCLUDED.priority),
            due_at = least(broadcast_outbox.due_at, EXCLUDED.due_at)
), outbox AS (
    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                 push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                 run_at, la_event, apns_timestamp, bundle_id, created_at, finished_at)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 1, 'placed', NULL::text, NULL::bigint, NULL::text, NULL,
            NULL, NULL, NULL, NULL, 'skipped', :skip_reason_code::text, :skip_reason::text,
            now()::timestamptz, NULL, NULL, NULL, now(), now()::timestamptz)
), superseded AS (
    UPDATE delivery_outbox SET state = 'superseded', finished_at = now()
    WHERE tenant_id = 'default' AND finished_at IS NULL AND store_id = ('s' || :st)
      AND delivery_id = ANY('{}'::bigint[]) AND state = 'pending'
)
SELECT 1;
COMMIT;
\endpipeline
\set stage 1

\else
-- ---- started / ready / picked_up: OrderTransaction.openOrder, then appendEvent ----
\set key random(1, 9000000000000000000)
-- flight 1, as Crema: BEGIN, the locked read and the claim in one round trip.
\startpipeline
BEGIN ISOLATION LEVEL READ COMMITTED;
WITH o AS (
    SELECT tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items, state, version, eta,
barista, pickup_point, delay_reason, cancel_reason, placed_at, updated_at,
           (SELECT name FROM stores s WHERE s.tenant_id = 'default' AND s.store_id = orders.store_id) AS store_name,
           (SELECT timezone FROM stores s WHERE s.tenant_id = 'default' AND s.store_id = orders.store_id) AS store_timezone,
           (SELECT events_per_order FROM tenant_limits l WHERE l.tenant_id = 'default') AS events_per_order
    FROM orders WHERE tenant_id = 'default' AND (NULL::text[] IS NULL OR store_id = ANY(NULL::text[])) AND order_id = md5(:oid::text)::uuid FOR UPDATE
), position AS (
    UPDATE stores SET stream_position = stream_position + 1
    WHERE tenant_id = 'default' AND store_id = (SELECT store_id FROM o)
    RETURNING stream_position
), t AS (SELECT 'live_activity' AS kind, p.target_id AS id, p.environment, extract(epoch FROM p.updated_at)::float8 AS registered_at,
       coalesce(p.bundle_id, 'cafe.crema.example', (SELECT default_bundle_id FROM tenants WHERE tenant_id = 'default')) AS bundle_id,
       p.frequent_updates
FROM push_targets p, o
WHERE p.tenant_id = 'default' AND p.store_id = o.store_id AND p.order_id = o.order_id AND p.retired_at IS NULL
UNION ALL
SELECT c.kind, c.token_id, c.environment, extract(epoch FROM c.updated_at)::float8,
       coalesce(c.bundle_id, 'cafe.crema.example', (SELECT default_bundle_id FROM tenants WHERE tenant_id = 'default')), true
FROM customer_tokens c, o WHERE c.tenant_id = 'default' AND c.customer_ref = o.customer_ref AND c.retired_at IS NULL)
SELECT o.*, (SELECT stream_position FROM position) AS stream_position,
       (SELECT json_agg(json_build_object('id', e.endpoint_id, 'events', e.events) ORDER BY e.endpoint_id)
 FROM webhook_endpoints e
 WHERE e.tenant_id = 'default' AND e.disabled_at IS NULL AND e.events && '{order.changed,activity.ended}'::text[]
   AND (e.stores IS NULL OR o.store_id = ANY(e.stores))) AS webhook_endpoints,
       (SELECT coalesce(json_agg(t), '[]') FROM t) AS targets,
(SELECT coalesce(json_agg(h), '[]') FROM (
    SELECT d.delivery_id AS id, d.target_kind AS kind, d.target_id AS target, d.order_id, d.push_type, d.la_event,
           d.priority, d.state AS state, extract(epoch FROM d.created_at)::float8 AS planned_at,
           extract(epoch FROM d.run_at)::float8 AS run_at, d.apns_timestamp
    FROM t CROSS JOIN LATERAL (
        SELECT * FROM delivery_outbox d
        WHERE d.tenant_id = 'default' AND d.target_kind = t.kind AND d.target_id = t.id AND d.created_at > now() - interval '24 hours'
        OFFSET 0
    ) d
) h) AS history
FROM o;
\if :stage = 1
INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
SELECT k.tenant_id, k.store_id, 'barista'::text, :key::text, ('POST /v1/orders/' || md5(:oid::text)::uuid || '/events')::text, '{"barista":"Sam","type":"started"}'::text, 0, '', now()::timestamptz
FROM orders k WHERE k.tenant_id = 'default' AND (NULL::text[] IS NULL OR k.store_id = ANY(NULL::text[])) AND k.order_id = md5(:oid::text)::uuid
ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = EXCLUDED.created_at
    WHERE idempotency_keys.created_at < now() - interval '86400 seconds'
RETURNING 1;
\elif :stage = 2
INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
SELECT k.tenant_id, k.store_id, 'barista'::text, :key::text, ('POST /v1/orders/' || md5(:oid::text)::uuid || '/events')::text, '{"type":"ready"}'::text, 0, '', now()::timestamptz
FROM orders k WHERE k.tenant_id = 'default' AND (NULL::text[] IS NULL OR k.store_id = ANY(NULL::text[])) AND k.order_id = md5(:oid::text)::uuid
ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = EXCLUDED.created_at
    WHERE idempotency_keys.created_at < now() - interval '86400 seconds'
RETURNING 1;
\else
INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
SELECT k.tenant_id, k.store_id, 'pos'::text, :key::text, ('POST /v1/orders/' || md5(:oid::text)::uuid || '/events')::text, '{"type":"picked_up"}'::text, 0, '', now()::timestamptz
FROM orders k WHERE k.tenant_id = 'default' AND (NULL::text[] IS NULL OR k.store_id = ANY(NULL::text[])) AND k.order_id = md5(:oid::text)::uuid
ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = EXCLUDED.created_at
    WHERE idempotency_keys.created_at < now() - interval '86400 seconds'
RETURNING 1;
\endif
\endpipeline
-- flight 2, as Crema: the write and COMMIT in one round trip.
\startpipeline
\if :stage = 1
WITH event AS (
    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 2, 'started',
            '{"barista":"Sam"}'::jsonb, 'barista', :key, now(), (SELECT stream_position FROM stores p WHERE p.tenant_id = 'default' AND p.store_id = ('s' || :st)))
), updated AS (
    UPDATE orders SET state = 'preparing', version = 2, eta = :eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_preparing::jsonb,
           -- An event after an erasure may bring new text (a cancel reason): retention looks at the order again.
           personal_data_removed_at = NULL
    WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND order_id = md5(:oid::text)::uuid
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_preparing
WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND scope = 'barista' AND idempotency_key = :key
), board AS (
    INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
    SELECT tenant_id, store_id, 5, now()::timestamptz + make_interval(secs => 1)
    FROM store_channels WHERE tenant_id = 'default' AND store_id = ('s' || :st)
    ON CONFLICT (tenant_id, store_id) DO UPDATE
        SET changes = broadcast_outbox.changes + 1, priority = greatest(broadcast_outbox.priority, EXCLUDED.priority),
            due_at = least(broadcast_outbox.due_at, EXCLUDED.due_at)
), outbox AS (
    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                 push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                 run_at, la_event, apns_timestamp, bundle_id, created_at, finished_at)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 2, 'started', NULL::text, NULL::bigint, NULL::text, NULL,
            NULL, NULL, NULL, NULL, 'skipped', :skip_reason_code::text, :skip_reason::text,
            now()::timestamptz, NULL, NULL, NULL, now(), now()::timestamptz)
), superseded AS (
    UPDATE delivery_outbox SET state = 'superseded', finished_at = now()
    WHERE tenant_id = 'default' AND finished_at IS NULL AND store_id = ('s' || :st)
      AND delivery_id = ANY('{}'::bigint[]) AND state = 'pending'
)
SELECT 1;
\elif :stage = 2
WITH event AS (
    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 3, 'ready',
            '{"pickup_point": null}'::jsonb, 'barista', :key, now(), (SELECT stream_position FROM stores p WHERE p.tenant_id = 'default' AND p.store_id = ('s' || :st)))
), updated AS (
    UPDATE orders SET state = 'ready', version = 3, eta = :eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_ready::jsonb,
           -- An event after an erasure may bring new text (a cancel reason): retention looks at the order again.
           personal_data_removed_at = NULL
    WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND order_id = md5(:oid::text)::uuid
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_ready
WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND scope = 'barista' AND idempotency_key = :key
), board AS (
    INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
    SELECT tenant_id, store_id, 10, now()::timestamptz + make_interval(secs => 1)
    FROM store_channels WHERE tenant_id = 'default' AND store_id = ('s' || :st)
    ON CONFLICT (tenant_id, store_id) DO UPDATE
        SET changes = broadcast_outbox.changes + 1, priority = greatest(broadcast_outbox.priority, EXCLUDED.priority),
            due_at = least(broadcast_outbox.due_at, EXCLUDED.due_at)
), outbox AS (
    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                 push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                 run_at, la_event, apns_timestamp, bundle_id, created_at, finished_at)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 3, 'ready', NULL::text, NULL::bigint, NULL::text, NULL,
            NULL, NULL, NULL, NULL, 'skipped', :skip_reason_code::text, :skip_reason::text,
            now()::timestamptz, NULL, NULL, NULL, now(), now()::timestamptz)
), superseded AS (
    UPDATE delivery_outbox SET state = 'superseded', finished_at = now()
    WHERE tenant_id = 'default' AND finished_at IS NULL AND store_id = ('s' || :st)
      AND delivery_id = ANY('{}'::bigint[]) AND state = 'pending'
)
SELECT 1;
\else
WITH event AS (
    INSERT INTO order_events (tenant_id, store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at, stream_seq)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 4, 'picked_up',
            '{}'::jsonb, 'pos', :key, now(), (SELECT stream_position FROM stores p WHERE p.tenant_id = 'default' AND p.store_id = ('s' || :st)))
), updated AS (
    UPDATE orders SET state = 'picked_up', version = 4, eta = :eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_picked_up::jsonb,
           -- An event after an erasure may bring new text (a cancel reason): retention looks at the order again.
           personal_data_removed_at = NULL
    WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND order_id = md5(:oid::text)::uuid
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_picked_up
WHERE tenant_id = 'default' AND store_id = ('s' || :st) AND scope = 'pos' AND idempotency_key = :key
), board AS (
    INSERT INTO broadcast_outbox (tenant_id, store_id, priority, due_at)
    SELECT tenant_id, store_id, 5, now()::timestamptz + make_interval(secs => 1)
    FROM store_channels WHERE tenant_id = 'default' AND store_id = ('s' || :st)
    ON CONFLICT (tenant_id, store_id) DO UPDATE
        SET changes = broadcast_outbox.changes + 1, priority = greatest(broadcast_outbox.priority, EXCLUDED.priority),
            due_at = least(broadcast_outbox.due_at, EXCLUDED.due_at)
), outbox AS (
    INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id,
                                 push_type, priority, topic, collapse_id, body, expires_at, state, reason_code, reason,
                                 run_at, la_event, apns_timestamp, bundle_id, created_at, finished_at)
    VALUES ('default', ('s' || :st), md5(:oid::text)::uuid, 4, 'picked_up', NULL::text, NULL::bigint, NULL::text, NULL,
            NULL, NULL, NULL, NULL, 'skipped', :skip_reason_code::text, :skip_reason::text,
            now()::timestamptz, NULL, NULL, NULL, now(), now()::timestamptz)
), superseded AS (
    UPDATE delivery_outbox SET state = 'superseded', finished_at = now()
    WHERE tenant_id = 'default' AND finished_at IS NULL AND store_id = ('s' || :st)
      AND delivery_id = ANY('{}'::bigint[]) AND state = 'pending'
)
SELECT 1;
\endif
COMMIT;
\endpipeline
\set stage (:stage + 1) % 4
\endif
