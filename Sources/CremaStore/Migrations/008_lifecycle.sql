-- Crema schema 008: orders that end by themselves, retention and erasure (docs/data-lifecycle.md).

-- How long a store's orders may wait before Crema closes them with an `expired` event (ExpiryLimits in CremaCore):
-- ready and not picked up, counted from when they became ready; queued and never started, counted from placement.
ALTER TABLE stores
    ADD COLUMN ready_expiry_minutes  integer NOT NULL DEFAULT 120 CHECK (ready_expiry_minutes BETWEEN 1 AND 10080),
    ADD COLUMN queued_expiry_minutes integer NOT NULL DEFAULT 240 CHECK (queued_expiry_minutes BETWEEN 1 AND 10080);

-- `expired` is recorded by Crema itself (actor `system`), never sent by a client; it ends the order as `canceled`.
ALTER TABLE order_events DROP CONSTRAINT order_events_event_type_check;
ALTER TABLE order_events ADD CONSTRAINT order_events_event_type_check
    CHECK (event_type IN ('placed', 'started', 'delayed', 'ready', 'picked_up', 'canceled', 'expired'));
ALTER TABLE order_events DROP CONSTRAINT order_events_actor_role_check;
ALTER TABLE order_events ADD CONSTRAINT order_events_actor_role_check
    CHECK (actor_role IN ('pos', 'barista', 'dashboard', 'app', 'system'));
ALTER TABLE order_events ADD CONSTRAINT order_events_expired_by_system
    CHECK ((event_type = 'expired') = (actor_role = 'system'));

-- The sweep finds overdue orders across all stores: open orders are few, and these keep the scan to them.
CREATE INDEX orders_ready_since ON orders (updated_at) WHERE state = 'ready';
CREATE INDEX orders_queued_since ON orders (placed_at) WHERE state = 'queued';

-- When the order's personal data was removed (by retention or an erasure); NULL while it still has it.
ALTER TABLE orders ADD COLUMN personal_data_removed_at timestamptz;
-- Retention finds ended orders that still hold personal data, oldest first.
CREATE INDEX orders_retention ON orders (updated_at)
    WHERE state IN ('picked_up', 'canceled') AND personal_data_removed_at IS NULL;

-- order_events stays append-only: history is never rewritten. The one exception is removing personal data, and only
-- when the transaction says so (`SET LOCAL crema.erasure = 'on'`, which only CremaStore's erasure and retention
-- set): then an UPDATE may replace values in `data` with null, and change nothing else (no other column, no key
-- added or removed, no other value). DELETE stays refused, always.
CREATE OR REPLACE FUNCTION order_events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND current_setting('crema.erasure', true) = 'on'
       AND to_jsonb(NEW) - 'data' = to_jsonb(OLD) - 'data'
       AND NOT EXISTS (
           SELECT 1 FROM jsonb_each(NEW.data) n
           WHERE NOT OLD.data ? n.key OR (n.value <> 'null'::jsonb AND OLD.data -> n.key <> n.value))
       AND NOT EXISTS (SELECT 1 FROM jsonb_each(OLD.data) o WHERE NOT NEW.data ? o.key)
    THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'order_events is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;

-- One row per erasure request (DELETE /v1/customers/{ref}): when, and how much was erased. The customer ref is kept
-- only as SHA-256 of its UTF-8 bytes, so a customer who asks "was I erased?" can be answered without keeping the ref.
CREATE TABLE customer_erasures (
    tenant_id           text        NOT NULL REFERENCES tenants (tenant_id),
    erasure_id          bigint      GENERATED ALWAYS AS IDENTITY,
    customer_ref_sha256 bytea       NOT NULL CHECK (octet_length(customer_ref_sha256) = 32),
    erased_at           timestamptz NOT NULL,
    orders              integer     NOT NULL,
    events              integer     NOT NULL,
    deliveries          integer     NOT NULL,
    tokens              integer     NOT NULL,
    idempotency_keys    integer     NOT NULL,
    PRIMARY KEY (tenant_id, erasure_id)
);
