-- Crema schema 019: every unique key of a tenant-owned table leads with tenant_id, and registrations take turns on a
-- row of their tenant instead of an advisory lock (issue #44, docs/scaling.md "Past one primary").
-- Citus distributes a table by tenant_id only when each of its unique constraints includes tenant_id: three did not.
-- The ids stay unique across tenants (they come from one identity each); the index only adds the tenant in front,
-- which every lookup by these ids already names (the dispatcher's joins pair tenant_id with target_id and token_id).
-- On one node this changes no answer. (Built in the migration's transaction: the tables are small; push_targets and
-- customer_tokens hold one row per registration, store_channels one per store.)
DROP INDEX push_targets_id;
CREATE UNIQUE INDEX push_targets_id ON push_targets (tenant_id, target_id);
DROP INDEX customer_tokens_id;
CREATE UNIQUE INDEX customer_tokens_id ON customer_tokens (tenant_id, token_id);
-- A channel is Apple's, made for one app of one tenant: unique within the tenant.
DROP INDEX store_channels_channel;
CREATE UNIQUE INDEX store_channels_channel ON store_channels (tenant_id, environment, bundle_id, channel_id);

-- Turns: a registration that must count before it inserts (a customer's tokens of one kind, a tenant's webhook
-- endpoints) inserts its turn's row first and deletes it before it commits. A second registration of the same turn
-- waits on the first one's row (the primary key) until that transaction ends, then finds it gone and goes on, so
-- the two count one after the other. The table is empty between transactions: it holds no customer after the
-- registration, and needs no retention. It is distributed by tenant_id with the rest, so the turn is taken on the
-- node that holds the tenant's rows, where an advisory lock is only the node the client happens to be connected to.
CREATE TABLE tenant_turns (
    tenant_id  text NOT NULL,
    turn       text NOT NULL,
    PRIMARY KEY (tenant_id, turn)
);
