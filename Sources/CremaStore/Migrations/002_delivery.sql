-- Crema schema 002: where pushes go (push targets) and what is to be sent (the delivery outbox).
-- Used by the delivery issue; designed with the foundation so the event transaction can write to them.

CREATE TABLE push_targets (
    store_id     text        NOT NULL REFERENCES stores (store_id),
    target_id    bigint      GENERATED ALWAYS AS IDENTITY,
    -- live_activity: one Live Activity's update token (per order); push_to_start: the customer's token for
    -- starting activities; alert: a device token for notifications; widget: a WidgetKit push token.
    kind         text        NOT NULL CHECK (kind IN ('live_activity', 'push_to_start', 'alert', 'widget')),
    order_id     uuid,
    customer_ref text,
    token        text        NOT NULL CHECK (token ~ '^[0-9a-f]{32,400}$'),
    environment  text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- Set when APNs says the token is gone (410 with its timestamp, BadDeviceToken, DeviceTokenNotForTopic).
    retired_at   timestamptz,
    retired_reason text,
    PRIMARY KEY (store_id, target_id),
    CHECK ((kind = 'live_activity') = (order_id IS NOT NULL)),
    CHECK (kind = 'live_activity' OR customer_ref IS NOT NULL)
);
CREATE UNIQUE INDEX push_targets_unique_token ON push_targets (store_id, kind, token);
CREATE INDEX push_targets_by_order ON push_targets (store_id, order_id) WHERE retired_at IS NULL;
CREATE INDEX push_targets_by_customer ON push_targets (store_id, customer_ref) WHERE retired_at IS NULL;

-- Every planned delivery and every deliberate skip, inserted in the event's transaction and claimed by
-- dispatchers with FOR UPDATE SKIP LOCKED (see docs/postgres-queues.md of the design).
CREATE TABLE delivery_outbox (
    store_id      text        NOT NULL,
    delivery_id   bigint      GENERATED ALWAYS AS IDENTITY,
    order_id      uuid        NOT NULL,
    order_version integer     NOT NULL,
    target_id     bigint,
    push_type     text        NOT NULL CHECK (push_type IN ('liveactivity', 'alert', 'widgets')),
    priority      smallint    CHECK (priority IN (1, 5, 10)),
    topic         text,
    collapse_id   text        CHECK (octet_length(collapse_id) <= 64),
    body          jsonb,
    expires_at    timestamptz,
    -- pending → inflight → sent | dead; skipped and superseded never leave the database.
    state         text        NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'inflight', 'sent', 'dead', 'skipped', 'superseded')),
    reason_code   text        NOT NULL,
    reason        text        NOT NULL,
    run_at        timestamptz NOT NULL DEFAULT now(),
    locked_until  timestamptz,
    attempts      integer     NOT NULL DEFAULT 0,
    max_attempts  integer     NOT NULL DEFAULT 8,
    apns_id       uuid,
    last_status   integer,
    last_reason   text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    PRIMARY KEY (store_id, delivery_id),
    FOREIGN KEY (store_id, order_id) REFERENCES orders (store_id, order_id)
);
CREATE INDEX delivery_outbox_pending ON delivery_outbox (run_at, delivery_id) WHERE state = 'pending';
CREATE INDEX delivery_outbox_inflight ON delivery_outbox (locked_until) WHERE state = 'inflight';
CREATE INDEX delivery_outbox_by_order ON delivery_outbox (store_id, order_id, delivery_id);
