-- bench/driver.pgbench.sql grouped as Crema's driver groups it: BEGIN with the reads in one pipeline (one round
-- trip), the write with COMMIT in another. Run with -M prepared.
\set id :client_id * 1000 + random(1, 1000)
\set key random(1, 9000000000000000000)
\startpipeline
BEGIN;
SELECT version, payload FROM bench_orders WHERE id = :id FOR UPDATE;
INSERT INTO bench_keys (key) VALUES ('k-' || :key) ON CONFLICT DO NOTHING RETURNING 1;
\endpipeline
\startpipeline
WITH o AS (UPDATE bench_orders SET version = version + 1, payload = '{"round":1}' WHERE id = :id RETURNING id, version) INSERT INTO bench_events (id, version, data) SELECT id, version, '{"round":1}' FROM o;
COMMIT;
\endpipeline
