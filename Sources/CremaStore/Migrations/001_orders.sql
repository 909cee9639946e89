-- Crema schema 001: stores, orders, the append-only event log and idempotency keys.
-- Every table carries store_id and leads its primary key with it, so the schema can be distributed by store
-- (for example with Citus: SELECT create_distributed_table('orders', 'store_id'), and so on).

CREATE TABLE stores (
    store_id          text        PRIMARY KEY CHECK (store_id ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name              text        NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
    timezone          text        NOT NULL DEFAULT 'UTC',
    -- The next number printed on a cup; taken under the store row lock when an order is placed.
    next_order_number bigint      NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE orders (
    store_id      text        NOT NULL REFERENCES stores (store_id),
    order_id      uuid        NOT NULL,
    number        bigint      NOT NULL,
    pos_ref       text        NOT NULL,
    customer_ref  text,
    display_name  text        NOT NULL,
    locale        text        NOT NULL,
    items         jsonb       NOT NULL,
    state         text        NOT NULL CHECK (state IN ('queued', 'preparing', 'ready', 'picked_up', 'canceled')),
    -- The number of accepted events; always equals the order's row count in order_events.
    version       integer     NOT NULL CHECK (version >= 1),
    eta           timestamptz NOT NULL,
    barista       text,
    pickup_point  text,
    delay_reason  text,
    cancel_reason text,
    -- The order's Live Activity projection, written in the same transaction as each event (projection issue).
    projection    jsonb,
    placed_at     timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (store_id, order_id),
    UNIQUE (store_id, number)
);
-- Orders are addressed by id alone in the API; ids are random UUIDs, so a plain index is enough
-- (a unique index without store_id could not be distributed).
CREATE INDEX orders_by_id ON orders (order_id);
-- Keyset pagination of GET /v1/orders and the open-orders board, oldest first.
CREATE INDEX orders_by_store_placed ON orders (store_id, placed_at, order_id);
CREATE INDEX orders_open_by_store ON orders (store_id, state, placed_at, order_id)
    WHERE state IN ('queued', 'preparing', 'ready');

-- One row per accepted event; never updated or deleted.
CREATE TABLE order_events (
    store_id        text        NOT NULL,
    order_id        uuid        NOT NULL,
    -- The order's version after this event: 1 for placed, then 2, 3, ...
    version         integer     NOT NULL CHECK (version >= 1),
    event_type      text        NOT NULL
        CHECK (event_type IN ('placed', 'started', 'delayed', 'ready', 'picked_up', 'canceled')),
    -- What the event carried, as the API received it (validated).
    data            jsonb       NOT NULL DEFAULT '{}',
    actor_role      text        NOT NULL CHECK (actor_role IN ('pos', 'barista', 'dashboard', 'app')),
    idempotency_key text,
    occurred_at     timestamptz NOT NULL,
    PRIMARY KEY (store_id, order_id, version),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, order_id)
);

CREATE FUNCTION order_events_are_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'order_events is append-only' USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER order_events_append_only BEFORE UPDATE OR DELETE ON order_events
    FOR EACH ROW EXECUTE FUNCTION order_events_are_append_only();

-- The first answer to each Idempotency-Key, replayed for retries within 24 hours. A key is claimed inside
-- the request's own transaction, so a failed request leaves no key behind and can be retried.
CREATE TABLE idempotency_keys (
    store_id        text        NOT NULL,
    -- Keys are scoped to the caller's role, so two clients of different roles cannot collide.
    scope           text        NOT NULL,
    idempotency_key text        NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    -- The request that claimed the key: its path and its body in canonical JSON (re-encoded with sorted
    -- keys, so whitespace and key order do not matter).
    request_path    text        NOT NULL,
    request_body    text        NOT NULL,
    -- The first answer, byte for byte, replayed to retries.
    response_status integer     NOT NULL,
    response_body   text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store_id, scope, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
