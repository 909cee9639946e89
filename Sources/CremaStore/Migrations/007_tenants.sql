-- Crema schema 007: tenants (docs/design.md §9.1, docs/tenants.md). A tenant (a brand) owns its stores, apps,
-- API keys and customers; everything that was here before belongs to the tenant `default`.
--
-- Every tenant-owned table gets tenant_id and its keys and indexes lead with it: tenant_id is what the schema
-- would be distributed by (docs/decisions.md, "Distributing by tenant"), so every query names it and a shard
-- answers it alone. Store ids, customer refs and Idempotency-Keys are unique within a tenant only.

CREATE TABLE tenants (
    tenant_id         text        PRIMARY KEY CHECK (tenant_id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name              text        NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
    -- The app a token belongs to when its registration names none (the tenant's first app unless changed).
    default_bundle_id text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
INSERT INTO tenants (tenant_id, name) VALUES ('default', 'Default');

-- An iOS app: its bundle id (the APNs topic) and the Apple team whose keys sign its pushes. A bundle id is
-- Apple's and globally unique, so it belongs to one tenant.
CREATE TABLE apps (
    tenant_id  text        NOT NULL REFERENCES tenants (tenant_id),
    bundle_id  text        NOT NULL CHECK (bundle_id ~ '^[A-Za-z0-9][A-Za-z0-9.-]{0,154}$'),
    team_id    text        NOT NULL CHECK (team_id ~ '^[A-Z0-9]{10}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, bundle_id)
);
CREATE UNIQUE INDEX apps_bundle_id ON apps (bundle_id);

-- An app's APNs signing keys. The .p8 is kept sealed (AES-256-GCM under CREMA_MASTER_KEY, which is never stored;
-- the row's identity is the associated data, so a sealed key moved to another row does not open) or as a path
-- to a file on the dispatcher's machine. The newest active key that APNs has not rejected signs.
CREATE TABLE apns_keys (
    tenant_id       text        NOT NULL,
    bundle_id       text        NOT NULL,
    key_id          text        NOT NULL CHECK (key_id ~ '^[A-Z0-9]{10}$'),
    sealed_p8       bytea,
    p8_path         text,
    -- The first 16 hex characters of the public key's SHA-256: tells keys apart without showing them.
    fingerprint     text        NOT NULL,
    state           text        NOT NULL CHECK (state IN ('active', 'inactive', 'retired')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    activated_at    timestamptz,
    retired_at      timestamptz,
    -- Set when APNs answered InvalidProviderToken for this key: it signs nothing until activated again.
    rejected_at     timestamptz,
    rejected_reason text,
    PRIMARY KEY (tenant_id, bundle_id, key_id),
    FOREIGN KEY (tenant_id, bundle_id) REFERENCES apps (tenant_id, bundle_id),
    CHECK ((sealed_p8 IS NULL) <> (p8_path IS NULL))
);

-- API keys Crema generated: only a SHA-256 of the whole key is kept (the key is 256 random bits, so a fast
-- hash is enough). key_id is the key's public part, which the presented key carries, so lookup is one row.
CREATE TABLE api_keys (
    key_id       text        PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{16}$'),
    tenant_id    text        NOT NULL REFERENCES tenants (tenant_id),
    role         text        NOT NULL CHECK (role IN ('pos', 'barista', 'dashboard', 'app', 'admin')),
    -- NULL: every store of the tenant; else only these.
    stores       text[],
    key_hash     bytea       NOT NULL CHECK (octet_length(key_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    -- The key this one was rotated from (both stay valid until the old one is revoked).
    rotated_from text
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at);

-- tenant_id on every tenant-owned row. Existing rows are the default tenant's; the default is dropped at the end
-- so that no future insert can forget to say whose row it writes.
ALTER TABLE stores           ADD COLUMN tenant_id text NOT NULL DEFAULT 'default' REFERENCES tenants (tenant_id);
ALTER TABLE orders           ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE order_events     ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE idempotency_keys ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE push_targets     ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE delivery_outbox  ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';
ALTER TABLE customer_tokens  ADD COLUMN tenant_id text NOT NULL DEFAULT 'default' REFERENCES tenants (tenant_id);
ALTER TABLE stream_tickets   ADD COLUMN tenant_id text NOT NULL DEFAULT 'default';

-- Which app a token belongs to (NULL: the tenant's default app), and which app's key signs an outbox row.
ALTER TABLE push_targets    ADD COLUMN bundle_id text;
ALTER TABLE customer_tokens ADD COLUMN bundle_id text;
ALTER TABLE delivery_outbox ADD COLUMN bundle_id text;
-- Only rows still to be sent need it (finished ones are history, and rewriting them all would be slow).
UPDATE delivery_outbox SET bundle_id = regexp_replace(topic, '\.push-type\..*$', '')
WHERE topic IS NOT NULL AND state IN ('pending', 'inflight');

ALTER TABLE orders          DROP CONSTRAINT orders_store_id_fkey;
ALTER TABLE push_targets    DROP CONSTRAINT push_targets_store_id_fkey;
ALTER TABLE stream_tickets  DROP CONSTRAINT stream_tickets_store_id_fkey;
ALTER TABLE order_events    DROP CONSTRAINT order_events_store_id_order_id_fkey;
ALTER TABLE delivery_outbox DROP CONSTRAINT delivery_outbox_store_id_order_id_fkey;

ALTER TABLE stores DROP CONSTRAINT stores_pkey, ADD PRIMARY KEY (tenant_id, store_id);
ALTER TABLE orders
    DROP CONSTRAINT orders_pkey, DROP CONSTRAINT orders_store_id_number_key,
    ADD PRIMARY KEY (tenant_id, store_id, order_id), ADD UNIQUE (tenant_id, store_id, number),
    ADD FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id);
ALTER TABLE order_events
    DROP CONSTRAINT order_events_pkey, ADD PRIMARY KEY (tenant_id, store_id, order_id, version),
    ADD FOREIGN KEY (tenant_id, store_id, order_id) REFERENCES orders (tenant_id, store_id, order_id);
ALTER TABLE idempotency_keys
    DROP CONSTRAINT idempotency_keys_pkey, ADD PRIMARY KEY (tenant_id, store_id, scope, idempotency_key);
ALTER TABLE push_targets
    DROP CONSTRAINT push_targets_pkey, ADD PRIMARY KEY (tenant_id, store_id, target_id),
    ADD FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id);
ALTER TABLE delivery_outbox
    DROP CONSTRAINT delivery_outbox_pkey, ADD PRIMARY KEY (tenant_id, store_id, delivery_id),
    ADD FOREIGN KEY (tenant_id, store_id, order_id) REFERENCES orders (tenant_id, store_id, order_id);
ALTER TABLE customer_tokens
    DROP CONSTRAINT customer_tokens_pkey, ADD PRIMARY KEY (tenant_id, customer_ref, token_id);
ALTER TABLE stream_tickets
    DROP CONSTRAINT stream_tickets_pkey, ADD PRIMARY KEY (tenant_id, store_id, ticket_hash),
    ADD FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id);

DROP INDEX orders_by_id, orders_by_store_placed, orders_open_by_store, orders_by_customer, push_targets_by_order,
    push_targets_by_customer, push_targets_one_per_order, order_events_by_stream, customer_tokens_active,
    delivery_outbox_by_order, delivery_outbox_sent_activity;
CREATE INDEX orders_by_id ON orders (tenant_id, order_id);
CREATE INDEX orders_by_store_placed ON orders (tenant_id, store_id, placed_at, order_id);
CREATE INDEX orders_open_by_store ON orders (tenant_id, store_id, state, placed_at, order_id)
    WHERE state IN ('queued', 'preparing', 'ready');
CREATE INDEX orders_by_customer ON orders (tenant_id, customer_ref, placed_at DESC, order_id DESC) WHERE customer_ref IS NOT NULL;
CREATE UNIQUE INDEX push_targets_one_per_order ON push_targets (tenant_id, store_id, order_id) WHERE retired_at IS NULL;
CREATE INDEX order_events_by_stream ON order_events (tenant_id, store_id, stream_seq);
CREATE UNIQUE INDEX customer_tokens_active ON customer_tokens (tenant_id, customer_ref, kind, token) WHERE retired_at IS NULL;
CREATE INDEX delivery_outbox_by_order ON delivery_outbox (tenant_id, store_id, order_id, delivery_id);
CREATE INDEX delivery_outbox_sent_activity ON delivery_outbox (tenant_id, store_id, order_id, sent_at DESC)
    WHERE state = 'sent' AND push_type = 'liveactivity';

ALTER TABLE stores           ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE orders           ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE order_events     ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE idempotency_keys ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE push_targets     ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE delivery_outbox  ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE customer_tokens  ALTER COLUMN tenant_id DROP DEFAULT;
ALTER TABLE stream_tickets   ALTER COLUMN tenant_id DROP DEFAULT;

-- Migration 005's ordering rule, scoped by tenant like every other query.
DROP FUNCTION delivery_staleness(text, uuid, bigint, text, bigint, text, text);
DROP FUNCTION delivery_sequence_busy(text, uuid, bigint, text, bigint, text);
CREATE FUNCTION delivery_staleness(
    d_tenant text, d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text, d_event text
) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN d_push IS DISTINCT FROM 'liveactivity' THEN NULL
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM orders o
            WHERE o.tenant_id = d_tenant AND o.store_id = d_store AND o.order_id = d_order
              AND o.state IN ('picked_up', 'canceled'))
            THEN 'start_order_finished'
        WHEN d_event = 'start' AND EXISTS (
            SELECT 1 FROM push_targets p
            WHERE p.tenant_id = d_tenant AND p.store_id = d_store AND p.order_id = d_order AND p.retired_at IS NULL)
            THEN 'start_activity_registered'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.tenant_id = d_tenant AND n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead') AND n.la_event = 'end')
            THEN 'superseded_by_end'
        WHEN EXISTS (
            SELECT 1 FROM delivery_outbox n
            WHERE n.tenant_id = d_tenant AND n.store_id = d_store AND n.order_id = d_order AND n.delivery_id > d_id
              AND n.push_type = 'liveactivity' AND n.target_kind = d_kind AND n.target_id = d_target
              AND n.state IN ('pending', 'inflight', 'sent', 'dead'))
            THEN 'superseded_by_newer'
    END
$$;
CREATE FUNCTION delivery_sequence_busy(
    d_tenant text, d_store text, d_order uuid, d_id bigint, d_kind text, d_target bigint, d_push text
) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT d_push IS NOT DISTINCT FROM 'liveactivity' AND EXISTS (
        SELECT 1 FROM delivery_outbox b
        WHERE b.tenant_id = d_tenant AND b.store_id = d_store AND b.order_id = d_order AND b.delivery_id <> d_id
          AND b.push_type = 'liveactivity' AND b.target_kind = d_kind AND b.target_id = d_target
          AND b.state IN ('pending', 'inflight'))
$$;

-- Each tenant's backend signs its customers' tokens with its own keys (the default tenant's come from
-- CREMA_CUSTOMER_JWT_*). keys: [{"algorithm":"hs256","sealed":"<base64>"} | {"algorithm":"es256","public_key":"<PEM>"}];
-- an HS256 secret is sealed under CREMA_MASTER_KEY like a .p8, an ES256 public key is not a secret.
CREATE TABLE customer_token_settings (
    tenant_id  text        PRIMARY KEY REFERENCES tenants (tenant_id),
    issuer     text        NOT NULL CHECK (length(issuer) BETWEEN 1 AND 500),
    audience   text        NOT NULL CHECK (length(audience) BETWEEN 1 AND 500),
    keys       jsonb       NOT NULL CHECK (jsonb_typeof(keys) = 'array' AND jsonb_array_length(keys) BETWEEN 1 AND 4),
    updated_at timestamptz NOT NULL DEFAULT now()
);
