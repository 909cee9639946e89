-- Crema schema 011: load limits (docs/limits.md). The operator's defaults come from the environment; a tenant's own
-- values, set by an administrator, live here. A NULL column follows the operator's default.
CREATE TABLE tenant_limits (
    tenant_id           text        PRIMARY KEY REFERENCES tenants (tenant_id),
    tokens_per_customer integer     CHECK (tokens_per_customer BETWEEN 1 AND 1000),
    streams_per_key     integer     CHECK (streams_per_key BETWEEN 1 AND 4096),
    webhooks            integer     CHECK (webhooks BETWEEN 1 AND 1000),
    events_per_order    integer     CHECK (events_per_order BETWEEN 2 AND 10000),
    -- 'rate/burst', or '0' for no rate limit.
    rate                text        CHECK (rate ~ '^(0|[1-9][0-9]{0,6}(/[1-9][0-9]{0,6})?)$'),
    updated_at          timestamptz NOT NULL
);

-- Streams are counted per API key: a ticket remembers the key that asked for it, so a stream opened with the
-- ticket counts against that key. NULL for tickets issued before this migration.
ALTER TABLE stream_tickets ADD COLUMN holder text;
