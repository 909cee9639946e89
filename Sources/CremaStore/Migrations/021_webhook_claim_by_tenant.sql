-- Crema schema 021: the webhook claim is made tenant by tenant (WebhookRepository.claim(for:)), and so is the index it
-- counts a tenant's and an endpoint's requests in flight with (issue #44, docs/scaling.md "Past one primary").
-- Under Citus a claim is one statement on the tenant's shard, naming the tenant on every table (a `FOR UPDATE` across
-- shards is refused there), and every index a claim reads leads with tenant_id, as the outbox's do since 017
-- (TenantKeyTests holds them to it). Rescue, which looks at every tenant's rows in flight, still finds them all in this
-- partial index: it holds only requests in flight, a few per endpoint. On one node this changes no answer.
CREATE INDEX webhook_deliveries_inflight_by_tenant ON webhook_deliveries (tenant_id, endpoint_id, locked_until)
    WHERE state = 'inflight';
DROP INDEX webhook_deliveries_inflight;
