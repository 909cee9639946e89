-- Crema schema 010: webhooks (docs/webhooks.md). A tenant's receivers learn what happened without polling: each
-- fact is written as a webhook event in the transaction that made it true, and fanned out to the endpoints that
-- asked for its type, through an outbox with the APNs outbox's guarantees (at least once, retried, dead, replayable).

-- A receiver. The secret that signs its requests is sealed like a .p8 (AES-256-GCM under CREMA_MASTER_KEY, bound to
-- the row) because Crema must sign with it; it is shown once, at registration.
CREATE TABLE webhook_endpoints (
    tenant_id       text        NOT NULL REFERENCES tenants (tenant_id),
    endpoint_id     uuid        NOT NULL,
    url             text        NOT NULL CHECK (url ~ '^https?://' AND octet_length(url) <= 2048),
    events          text[]      NOT NULL CHECK (cardinality(events) > 0
        AND events <@ ARRAY['order.changed', 'delivery.dead', 'token.retired', 'activity.ended']),
    -- NULL: every store of the tenant; else only these (the registering key's stores).
    stores          text[],
    sealed_secret   bytea       NOT NULL,
    created_at      timestamptz NOT NULL,
    -- Set when the receiver answered 410 Gone: it gets nothing more, and its pending deliveries are dead.
    disabled_at     timestamptz,
    disabled_reason text,
    PRIMARY KEY (tenant_id, endpoint_id)
);
-- Every event transaction looks up the tenant's live endpoints: a handful of rows.
CREATE INDEX webhook_endpoints_live ON webhook_endpoints (tenant_id) WHERE disabled_at IS NULL;

-- One fact, written once whatever the number of endpoints; `body` is what is signed and sent. The order and the
-- customer it concerns are kept beside it so that retention and erasure can find and redact it.
CREATE TABLE webhook_events (
    tenant_id    text        NOT NULL,
    event_id     uuid        NOT NULL,
    event_type   text        NOT NULL CHECK (event_type IN ('order.changed', 'delivery.dead', 'token.retired', 'activity.ended')),
    store_id     text,
    order_id     uuid,
    customer_ref text,
    -- json, not jsonb: the text is kept byte for byte as written.
    body         json        NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX webhook_events_by_order ON webhook_events (tenant_id, store_id, order_id) WHERE order_id IS NOT NULL;
CREATE INDEX webhook_events_by_customer ON webhook_events (tenant_id, customer_ref) WHERE customer_ref IS NOT NULL;

-- One event for one endpoint: pending → inflight → sent | dead (a replay puts a dead one back to pending).
CREATE TABLE webhook_deliveries (
    tenant_id    text        NOT NULL,
    delivery_id  bigint      GENERATED ALWAYS AS IDENTITY,
    endpoint_id  uuid        NOT NULL,
    event_id     uuid        NOT NULL,
    state        text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'inflight', 'sent', 'dead')),
    attempts     integer     NOT NULL DEFAULT 0,
    run_at       timestamptz NOT NULL,
    locked_until timestamptz,
    last_status  integer,
    last_error   text,
    replays      integer     NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    sent_at      timestamptz,
    finished_at  timestamptz,
    PRIMARY KEY (tenant_id, delivery_id),
    FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, endpoint_id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, event_id) REFERENCES webhook_events (tenant_id, event_id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, endpoint_id, run_at, delivery_id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_inflight ON webhook_deliveries (locked_until) WHERE state = 'inflight';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (tenant_id, endpoint_id, delivery_id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (tenant_id, event_id);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state = 'sent';
