-- Crema schema 018: a tenant's share (docs/limits.md), its weight against the other tenants when they compete for the
-- database connections of order commands. NULL follows the default of 1, an equal split.
ALTER TABLE tenant_limits ADD COLUMN share integer CHECK (share BETWEEN 1 AND 100);
