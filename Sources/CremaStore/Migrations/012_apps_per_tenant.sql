-- Crema schema 012: a bundle id is a tenant's own (docs/tenants.md, "Apps and APNs keys"). Migration 007 made it
-- unique across tenants, first come, first served: any tenant's administrator could register another brand's
-- public bundle id and block it, and the refusal told them which bundle ids other tenants use. An app is now
-- unique within its tenant only (the primary key, tenant_id and bundle_id); the same bundle id in two tenants is
-- two apps, each signed with its own tenant's keys.
DROP INDEX apps_bundle_id;
