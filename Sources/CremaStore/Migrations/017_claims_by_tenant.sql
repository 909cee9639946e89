-- Crema schema 017: claims made tenant by tenant, and an outbox whose claims are HOT updates
-- (docs/design.md §6, docs/scaling.md). Built inside the migration transaction, like 009.
--
-- A push was two updates, neither HOT: `state` sat in the predicate of four partial indexes and `locked_until`
-- in one, so the claim (pending → inflight) and the record (inflight → sent) each wrote a new entry into every
-- index, eight a push. Now no index names a column the claim changes (state, attempts, locked_until, lease), so
-- the claim rewrites the row in place on its page; due work is found through one partial index whose membership
-- changes once per row (`finished_at IS NULL`: in when planned, out when finished), and only the finishing
-- update (or a retry, which moves run_at) writes index entries.
--
-- Every index the claim, the withdrawal and the planner's history read leads with tenant_id, so a dispatcher claims
-- one tenant's rows at a time (tenants take turns) and Citus can route each of those statements to one shard.

-- Pending and in-flight rows, by tenant, oldest due first: the claim (state = 'pending' is checked on the row, so
-- rows in flight, a batch's worth, are stepped over), the survey of tenants with due work, rescue and depth().
CREATE INDEX delivery_outbox_due ON delivery_outbox (tenant_id, run_at, delivery_id) WHERE finished_at IS NULL;
-- Unfinished Live Activity rows of an order: what the withdrawal before each claim looks at.
CREATE INDEX delivery_outbox_open_activity ON delivery_outbox (tenant_id, store_id, order_id)
    WHERE finished_at IS NULL AND push_type = 'liveactivity';
-- A target's recent decisions (the planner's history), within its tenant.
CREATE INDEX delivery_outbox_target_history ON delivery_outbox (tenant_id, target_kind, target_id, created_at)
    WHERE target_id IS NOT NULL;

-- Their predecessors named state (or, for by_target, no tenant). sent_activity served one read of one order's rows,
-- which by_order serves as well (an order has a bounded number of pushes).
DROP INDEX delivery_outbox_pending, delivery_outbox_inflight, delivery_outbox_pending_activity,
    delivery_outbox_sent_activity, delivery_outbox_by_target;

-- The primary key leads with the order, so it also serves every read of an order's pushes (the delivery log, the
-- ordering rule's look at an activity's other rows, the customer's last Live Activity push), which by_order served:
-- one index entry fewer for every row written and every row finished. Each statement that names a row by its id
-- names its order too (the claim, the record, the withdrawal, pruning); the planner's superseding, which knows
-- only ids, reads the tenant's unfinished rows.
ALTER TABLE delivery_outbox DROP CONSTRAINT delivery_outbox_pkey, ADD PRIMARY KEY (tenant_id, store_id, order_id, delivery_id);
DROP INDEX delivery_outbox_by_order;

-- Room on each page for the claim's new row versions, so they can stay on the page (a HOT update needs that). A claim
-- of 64 rows rewrites every row it takes on a page within one statement, before any old version can be pruned: at
-- fillfactor 70 half the claims found no room (HOT 50 %), at 50 all of them did (bench/dispatch.sh -s, 2026-11-28).
-- New pages only: the rows already written are finished history or soon will be.
ALTER TABLE delivery_outbox SET (fillfactor = 50);

-- The broadcast outbox is claimed tenant by tenant too (BroadcastDispatcher): its due boards by tenant.
CREATE INDEX broadcast_outbox_tenant_due ON broadcast_outbox (tenant_id, due_at);
DROP INDEX broadcast_outbox_due;

-- Retention scrubs tenant by tenant (LifecycleSweeper): the ended orders still holding personal data, by tenant.
CREATE INDEX orders_retention_by_tenant ON orders (tenant_id, updated_at)
    WHERE state IN ('picked_up', 'canceled') AND personal_data_removed_at IS NULL;
DROP INDEX orders_retention;
