-- pgbench peer of bench/driver (DriverBench): the same event-shaped transaction, statement for statement, one
-- round trip per statement (run with -M prepared: Crema's driver prepares each statement once per connection).
-- Each client works on its own 1000 orders, as DriverBench's clients do, so no client waits on another's lock.
\set id :client_id * 1000 + random(1, 1000)
\set key random(1, 9000000000000000000)
BEGIN;
SELECT version, payload FROM bench_orders WHERE id = :id FOR UPDATE;
INSERT INTO bench_keys (key) VALUES ('k-' || :key) ON CONFLICT DO NOTHING RETURNING 1;
WITH o AS (UPDATE bench_orders SET version = version + 1, payload = '{"round":1}' WHERE id = :id RETURNING id, version) INSERT INTO bench_events (id, version, data) SELECT id, version, '{"round":1}' FROM o;
COMMIT;
