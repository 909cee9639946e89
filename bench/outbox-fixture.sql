-- N pending alert pushes, each to its own customer token, as a planned outbox looks after N ready events.
-- psql -v n=20000 -f bench/outbox-fixture.sql. The same rows are what bench/apns_peer.py sends with aioapns.
INSERT INTO stores (tenant_id, store_id, name, timezone) VALUES ('default', 'bench', 'Bench', 'UTC') ON CONFLICT DO NOTHING;
INSERT INTO orders (tenant_id, store_id, order_id, number, pos_ref, customer_ref, display_name, locale, items, state, version, eta,
                    placed_at, updated_at, projection)
SELECT 'default', 'bench', md5('order' || i)::uuid, i, 'B-' || i, 'bench-' || i, 'Ana', 'en', '[{"name":"Latte","quantity":1}]',
       'ready', 2, now() + interval '5 minutes', now(), now(), '{}'
FROM generate_series(1, :n) AS i;
INSERT INTO customer_tokens (tenant_id, customer_ref, kind, token, environment)
SELECT 'default', 'bench-' || i, 'alert', md5('token' || i) || md5('more' || i), 'production' FROM generate_series(1, :n) AS i;
-- Statistics for the join below, and the tenant in it, so it probes the token index instead of scanning the
-- whole table once per row (100,000 rows took minutes without). And for orders: each outbox row's foreign-key
-- check plans once, and planned on a table the planner believes empty it scans all of orders per row (100,000
-- rows ran for over six minutes at 2026-11-24 before this was added).
ANALYZE customer_tokens, orders;
INSERT INTO delivery_outbox (tenant_id, store_id, order_id, order_version, order_event, target_kind, target_id, push_type,
                             priority, topic, bundle_id, collapse_id, body, expires_at, reason_code, reason)
SELECT 'default', 'bench', md5('order' || i)::uuid, 2, 'ready', 'alert', t.token_id, 'alert', 10, :'topic', :'topic', md5('order' || i)::uuid::text,
       '{"aps":{"alert":{"body":"Your oat latte is waiting at the counter.","title":"Order #' || i || ' is ready"},"interruption-level":"time-sensitive","sound":"default","thread-id":"' || md5('order' || i)::uuid || '"}}',
       now() + interval '1 hour', 'alert_no_activity', 'bench fixture'
FROM generate_series(1, :n) AS i JOIN customer_tokens t ON t.tenant_id = 'default' AND t.customer_ref = 'bench-' || i;
