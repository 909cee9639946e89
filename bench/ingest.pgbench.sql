-- pgbench peer of bench/lifecycle.lua: the SQL that Crema's OrderStore runs for an order's lifecycle
-- (placed -> started -> ready -> picked_up), statement for statement, one pgbench "transaction" per event.
--
-- Run with -M extended: Crema sends every statement with PQexecParams (unnamed statement, parse + bind +
-- execute each time, text parameters), which is what pgbench's extended mode does; :variables become
-- bind parameters. BEGIN and COMMIT are separate round trips, as in PostgresPool.withTransaction.
--
-- Each client walks one lifecycle at a time through the variable :stage (start it with -D stage=0; client
-- variables persist between pgbench transactions), so pgbench's tps is events/s and its per-transaction latency (--log) is the latency
-- of one event's database transaction -- the same unit as wrk's per-request latency.
--
-- Constant texts are given with -D by bench/ingest.sh (pgbench would read ":1" or ":15" inside a string
-- literal as a variable): items, placed_data, placed_request, resp_* (the stored answers) and proj_* (the
-- stored Live Activity projections) per state -- real texts captured from Crema, so rows have Crema's sizes.
--
-- Deviations from Crema, all small: the order id is md5(random)::uuid computed by the server (Crema makes
-- the UUID in Swift; pgbench has no string variables), occurred_at/placed_at use now() (Crema binds its
-- clock), role and event names are literals (Crema binds them), the notify payload is concatenated in SQL
-- (Crema binds a JSON text it encoded), and request bodies, answers and projections are constant texts of
-- Crema's size (Crema renders each one for its order).
--
-- Mirrors Sources/CremaStore/OrderStore.swift as of commit bf1e5db (with the stored projection); when that
-- SQL changes, change this file too.

\if :stage = 0
-- ---- placed: OrderStore.place ----
\set st random(1, 8)
\set oid random(1, 9000000000000000000)
\set key random(1, 9000000000000000000)
BEGIN ISOLATION LEVEL READ COMMITTED;
INSERT INTO idempotency_keys (store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
VALUES ('s' || :st, 'pos', :key, 'POST /v1/orders', :placed_request, 0, '')
ON CONFLICT (store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = now()
    WHERE idempotency_keys.created_at < now() - make_interval(secs => 86400)
RETURNING 1;
UPDATE stores SET next_order_number = next_order_number + 1 WHERE store_id = 's' || :st
RETURNING next_order_number - 1 AS number, name, timezone \gset
WITH inserted AS (
    INSERT INTO orders (store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items,
                        state, version, eta, placed_at, updated_at, projection)
    VALUES ('s' || :st, md5(:oid::text)::uuid, :number, 'T-' || :oid, 'c-' || :oid,
            'Ana', 'en', :items::jsonb,
            'queued', 1, now() + interval '10 minutes', now(), now(), :proj_queued::jsonb)
    RETURNING store_id, order_id
), event AS (
    INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
    SELECT store_id, order_id, 1, 'placed', :placed_data::jsonb,
           'pos', :key, now()
    FROM inserted
), answer AS (
    UPDATE idempotency_keys SET response_status = 201, response_body = :resp_queued
    WHERE store_id = 's' || :st AND scope = 'pos' AND idempotency_key = :key
)
SELECT pg_notify('crema_order_changes',
    '{"order_id":"' || md5(:oid::text)::uuid || '","state":"queued","store_id":"s' || :st || '","version":' || '1}');
COMMIT;
\set stage 1

\else
-- ---- started / ready / picked_up: OrderStore.apply ----
\set key random(1, 9000000000000000000)
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items, state, version, eta,
       barista, pickup_point, delay_reason, cancel_reason, placed_at, updated_at,
       (SELECT name FROM stores s WHERE s.store_id = orders.store_id) AS store_name,
       (SELECT timezone FROM stores s WHERE s.store_id = orders.store_id) AS store_timezone
FROM orders WHERE order_id = md5(:oid::text)::uuid FOR UPDATE \gset cur_
\if :stage = 1
INSERT INTO idempotency_keys (store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
VALUES (:cur_store_id, 'barista', :key, 'POST /v1/orders/' || :cur_order_id || '/events', '{"barista":"Sam","type":"started"}', 0, '')
ON CONFLICT (store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = now()
    WHERE idempotency_keys.created_at < now() - make_interval(secs => 86400)
RETURNING 1;
WITH event AS (
    INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
    VALUES (:cur_store_id, :cur_order_id, 2, 'started', '{"barista": "Sam"}'::jsonb, 'barista', :key, now())
), updated AS (
    UPDATE orders SET state = 'preparing', version = 2, eta = :cur_eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_preparing::jsonb
    WHERE store_id = :cur_store_id AND order_id = :cur_order_id
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_preparing
    WHERE store_id = :cur_store_id AND scope = 'barista' AND idempotency_key = :key
)
SELECT pg_notify('crema_order_changes',
    '{"order_id":"' || :cur_order_id || '","state":"preparing","store_id":"' || :cur_store_id || '","version":' || '2}');
COMMIT;
\set stage 2
\elif :stage = 2
INSERT INTO idempotency_keys (store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
VALUES (:cur_store_id, 'barista', :key, 'POST /v1/orders/' || :cur_order_id || '/events', '{"type":"ready"}', 0, '')
ON CONFLICT (store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = now()
    WHERE idempotency_keys.created_at < now() - make_interval(secs => 86400)
RETURNING 1;
WITH event AS (
    INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
    VALUES (:cur_store_id, :cur_order_id, 3, 'ready', '{"pickup_point": null}'::jsonb, 'barista', :key, now())
), updated AS (
    UPDATE orders SET state = 'ready', version = 3, eta = :cur_eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_ready::jsonb
    WHERE store_id = :cur_store_id AND order_id = :cur_order_id
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_ready
    WHERE store_id = :cur_store_id AND scope = 'barista' AND idempotency_key = :key
)
SELECT pg_notify('crema_order_changes',
    '{"order_id":"' || :cur_order_id || '","state":"ready","store_id":"' || :cur_store_id || '","version":' || '3}');
COMMIT;
\set stage 3
\else
INSERT INTO idempotency_keys (store_id, scope, idempotency_key, request_path, request_body, response_status, response_body)
VALUES (:cur_store_id, 'pos', :key, 'POST /v1/orders/' || :cur_order_id || '/events', '{"type":"picked_up"}', 0, '')
ON CONFLICT (store_id, scope, idempotency_key) DO UPDATE
    SET request_path = EXCLUDED.request_path, request_body = EXCLUDED.request_body,
        response_status = 0, response_body = '', created_at = now()
    WHERE idempotency_keys.created_at < now() - make_interval(secs => 86400)
RETURNING 1;
WITH event AS (
    INSERT INTO order_events (store_id, order_id, version, event_type, data, actor_role, idempotency_key, occurred_at)
    VALUES (:cur_store_id, :cur_order_id, 4, 'picked_up', '{}'::jsonb, 'pos', :key, now())
), updated AS (
    UPDATE orders SET state = 'picked_up', version = 4, eta = :cur_eta,
           barista = 'Sam', pickup_point = NULL, delay_reason = NULL,
           cancel_reason = NULL, updated_at = now(), projection = :proj_picked_up::jsonb
    WHERE store_id = :cur_store_id AND order_id = :cur_order_id
), answer AS (
    UPDATE idempotency_keys SET response_status = 200, response_body = :resp_picked_up
    WHERE store_id = :cur_store_id AND scope = 'pos' AND idempotency_key = :key
)
SELECT pg_notify('crema_order_changes',
    '{"order_id":"' || :cur_order_id || '","state":"picked_up","store_id":"' || :cur_store_id || '","version":' || '4}');
COMMIT;
\set stage 0
\endif
\endif
