-- pgbench peer of bench/lifecycle.lua: the SQL that Crema runs for an order's lifecycle (placed -> started ->
-- ready -> picked_up), statement for statement, one pgbench "transaction" per event. Not pipelined: every
-- statement is its own round trip (5 per event, where Crema makes 2). bench/ingest-pipelined.pgbench.sql has
-- the same statements grouped into round trips as Crema groups them.
--
-- Run with -M prepared: Crema prepares each statement once per connection (PQsendPrepare, parameter types left
-- to the server) and then runs it by name with text parameters, which is what pgbench's prepared mode does;
-- :variables become $n parameters, one per occurrence as in Crema. BEGIN and COMMIT are prepared statements in
-- both.
--
-- What Crema runs per event (Sources/CremaStore/OrderTransaction.swift; the planning reads and the outbox
-- writes are Sources/CremaStore/DeliveryPlanning.swift; the tenant filter Sources/CremaStore/TenantScope+SQL.swift):
--   placed (openPlacement, insertPlaced):
--     BEGIN ISOLATION LEVEL READ COMMITTED; the key claim (INSERT ... SELECT ... ON CONFLICT ... RETURNING 1);
--     UPDATE stores ... RETURNING the next number (and taking the store's stream position), with the planning-read CTEs (the customer's targets and their
--     last day of decisions) -- then the core decides -- the write (order, placed event, stored answer,
--     outbox, superseded rows in one WITH statement); COMMIT.
--   started / ready / picked_up (openOrder, appendEvent):
--     BEGIN; SELECT the order FOR UPDATE with the store's stream position and the planning-read CTEs; the key claim, its store read from the
--     order in the same statement -- the core decides -- the write (event, order, stored answer, outbox,
--     superseded); COMMIT.
-- The bench registers no push tokens (bench/lifecycle.lua), so the planning reads find no target and the plan
-- is one "no_targets" skip row per event: Crema still sends both outbox CTEs (DeliveryPlanning.write
-- always does), and so does this file, with that one row (:skip_reason_code, :skip_reason) and no superseded ids ('{}').
-- bench/ingest.sh checks that its sample lifecycle wrote exactly those rows.
--
-- Each client walks one lifecycle at a time through the variable :stage (start it with -D stage=0; client
-- variables persist between pgbench transactions), so pgbench's tps is events/s and its per-transaction latency
-- (--log) is the latency of one event's database transaction -- the same unit as wrk's per-request latency.
--
-- Texts are given with -D by bench/ingest.sh (pgbench would read ":1" or ":null" inside a string literal as a
-- variable): eta (the order's ETA, one constant as in bench/lifecycle.lua), items, placed_data, placed_request,
-- resp_* (the stored answers), proj_* (the stored Live Activity projections) and skip_reason_code, skip_reason
-- (the plan's skip row) -- real texts captured from Crema, so rows have Crema's sizes.
--
-- Deviations from Crema's statements (the same statements otherwise, clause for clause):
--   * values Crema binds that are the same for every event of a kind are literals here: the tenant 'default'
--     (the bench's API keys are the default tenant's), roles and key scopes, event types, states, versions,
--     answer statuses, the 86400 s key window, the default app 'cafe.crema.example', the empty superseded list
--     '{}', the constant request bodies and event data of later events, and 'Sam';
--   * NULL binds are NULL literals (pgbench cannot bind NULL): the scope's store list (the bench's keys reach
--     every store, so Crema binds NULL twice per tenant filter) and the pickup/delay/cancel columns;
--   * Crema's clock (occurred_at, placed_at, updated_at, created_at, finished_at) is now(), and the history
--     window's start is now() - interval '24 hours' (Crema binds its clock minus 24 h);
--   * the order id is md5(:oid)::uuid and the store 's' || :st, computed by the server (pgbench cannot build a
--     string), so the event path, pos_ref and customer_ref are concatenated in SQL where Crema binds text;
--   * later events bind the store (:st), the ETA (:eta) and the barista ('Sam') that the earlier events wrote,
--     where Crema binds what its locked SELECT returned: the same values; the SELECT runs unchanged, and its
--     answer is read and discarded;
--   * answers, projections, the placed request and the skip row's run_at are constants of Crema's size, where
--     Crema renders each one for its order and its clock;
--   * no pg_notify: Crema sends none in the event's transaction either;
--   * the bench has no webhook endpoint, so, as in Crema, the first round trip's webhook_endpoints is NULL and the
--     write holds no webhook statement;
--   * Crema's replay path (a key seen before: its stored answer read, then ROLLBACK) never runs in the bench.
--   * the event's stream position (order_events.stream_seq) is read back from the store's row in the insert, where
--     Crema binds the position its first round trip's update returned (pgbench cannot carry it across a pipeline):
--     the same value, for one more primary-key read of a row the transaction holds.
--
-- Held to Crema's statements, not to a commit: before every run bench/ingest.sh turns PostgreSQL's statement log on
-- for its sample lifecycle through crema serve, and bench/ingest_statements.py compares the statements of Crema's
-- four event transactions with this file's (and bench/ingest-pipelined.pgbench.sql's) for each stage, in order, with
-- parameters, literals, now() and the computed values above normalized away; the run is refused when they differ.
-- When Sources/CremaStore/OrderTransaction.swift (or DeliveryPlanning.swift, WebhookOutbox.swift, TenantScope+SQL.swift)
-- changes, change both files; `bench/ingest.sh -s` checks them without a benchmark.

\if :stage = 0
-- ---- placed: OrderTransaction.openPlacement, then insertPlaced ----
\set st random(1, 8)
\set oid random(1, 9000000000000000000)
\set key random(1, 9000000000000000000)
BEGIN ISOLATION LEVEL READ COMMITTED;
INSERT INTO idempotency_keys (tenant_id, store_id, scope, idempotency_key, request_path, request_body, response_status, response_body, created_at)
VALUES ('default', ('s' || :st), 'pos', :key, 'POST /v1/orders', :placed_request, 0, '', now()::timestamptz)
ON CONFLICT (tenant_id, store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = EXCLUDED.created_at
    WHERE idempotency_keys.created_at < now() - interval '86400 seconds'
RETURNING 1;
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
\set stage 1

\else
-- ---- started / ready / picked_up: OrderTransaction.openOrder, then appendEvent ----
\set key random(1, 9000000000000000000)
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
\set stage (:stage + 1) % 4
\endif
