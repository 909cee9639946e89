-- Crema schema 022: an order's updates are HOT while it stays open (docs/design.md §6, #45).
--
-- Every event updated its order with a new entry in every index: `state` sat in the key or the predicate of five
-- partial indexes and `updated_at` in two, so no update could stay on its page (6.5 index entries an event, the
-- largest share of what an event writes). Now no index names a column an event changes while the order is open:
-- "open" is one stored column computed from `state` (its one home in SQL, beside `OrderState.isTerminal`), and
-- the indexes name only it, the tenant, the store, the customer and the placing time, which never change. An
-- order enters the open index when placed and leaves it once, when it ends; the events between (started, delayed,
-- ready) rewrite the row in place.

-- Room on each page for a new version of the orders on it (the table is rewritten by the column below, so the
-- rows already written get the room too). At 85 the started and ready updates were as HOT as at 70 (0.49 and 0.50 of
-- 0.75 updates an event, bench/ingest.sh -a), for a sixth more heap rather than two fifths: orders are kept.
-- The rewrite holds orders' lock while it runs: 17 s for 500,000 orders (650 MB) on a busy 2-core machine.
ALTER TABLE orders SET (fillfactor = 85);
ALTER TABLE orders ADD COLUMN is_open boolean GENERATED ALWAYS AS (state IN ('queued', 'preparing', 'ready')) STORED;

-- A store's open orders in placing order: the board, the listing of a store's open orders, and the sweep of overdue
-- orders (open orders are few; the sweep checks each one's state and times on the row).
CREATE INDEX orders_open ON orders (tenant_id, store_id, placed_at, order_id) WHERE is_open;
-- Ended orders still holding personal data, by tenant and placing time: an order ended after it was placed, so the
-- ones ended before a cutoff are among those placed before it (retention checks `updated_at` on the row).
CREATE INDEX orders_retention_by_placing ON orders (tenant_id, placed_at)
    WHERE NOT is_open AND personal_data_removed_at IS NULL;

DROP INDEX orders_open_by_store, orders_ready_since, orders_queued_since, orders_retention_by_tenant;
