-- Crema schema 023: a store's stream position is taken in the event's transaction, on the store's row (#44 item 6).
--
-- The dashboard stream's cursor was `order_events.stream_seq`, one identity for every store, read only below the
-- oldest running transaction (`stream_xid < pg_snapshot_xmin(pg_current_snapshot())`, migration 004): numbers are
-- taken at insert time and commit in any order, so the reader waited for every older writer. That rule holds on one
-- node only. On Citus the transaction id written with the row is the coordinator's and the snapshot compared with it
-- a worker's: the stream never saw an event. Now each event takes its store's next position by updating the store's
-- row, which it holds until it commits, so a store's positions commit in their own order: a reader that sees a
-- position sees every lower one, on one node, on a standby (commits replay in order) and on a worker (the store's row
-- and its events live on the same shard). Placing already held the store's row (its next order number); every other
-- event now does too, for the rest of its transaction: a store's events are written one at a time.

ALTER TABLE stores ADD COLUMN stream_position bigint NOT NULL DEFAULT 0;
-- Positions go on from the numbers already given, so a cursor a dashboard holds stays valid.
UPDATE stores s SET stream_position = coalesce(
    (SELECT max(e.stream_seq) FROM order_events e WHERE e.tenant_id = s.tenant_id AND e.store_id = s.store_id), 0);

ALTER TABLE order_events ALTER COLUMN stream_seq DROP IDENTITY;
ALTER TABLE order_events DROP COLUMN stream_xid;
-- One event per position in a store: the rule above, checked by the index the stream already reads.
CREATE UNIQUE INDEX order_events_stream_position ON order_events (tenant_id, store_id, stream_seq);
DROP INDEX order_events_by_stream;

-- The store's row is now updated by every event: room on its page for the next version keeps those updates HOT
-- (no index names the positions or the order number). Stores are few; the table stays small.
ALTER TABLE stores SET (fillfactor = 50);
