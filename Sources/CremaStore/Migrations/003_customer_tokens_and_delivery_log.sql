-- Crema schema 003: customer-level tokens, and what the dispatcher and the deliveries log need per outbox row.
--
-- Customer tokens (alert, widget, push-to-start) belong to the customer, not to a store: DESIGN §9 registers
-- them at /v1/customers/{ref}/tokens/... with no store in the path, and a customer orders at any store.
-- push_targets keeps only per-order Live Activity tokens (keyed by store, like the order they belong to).
CREATE TABLE customer_tokens (
    customer_ref   text        NOT NULL,
    token_id       bigint      GENERATED ALWAYS AS IDENTITY,
    kind           text        NOT NULL CHECK (kind IN ('push_to_start', 'alert', 'widget')),
    token          text        NOT NULL CHECK (token ~ '^[0-9a-f]+$' AND length(token) BETWEEN 32 AND 400),
    environment    text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    retired_at     timestamptz,
    retired_reason text,
    PRIMARY KEY (customer_ref, token_id)
);
CREATE UNIQUE INDEX customer_tokens_active ON customer_tokens (customer_ref, kind, token) WHERE retired_at IS NULL;
CREATE UNIQUE INDEX customer_tokens_id ON customer_tokens (token_id);

ALTER TABLE push_targets ADD CONSTRAINT push_targets_activity_only CHECK (kind = 'live_activity');
-- 002's check used {32,400}, beyond PostgreSQL's regex repetition limit of 255: every insert failed.
ALTER TABLE push_targets DROP CONSTRAINT push_targets_token_check;
ALTER TABLE push_targets ADD CONSTRAINT push_targets_token_check CHECK (token ~ '^[0-9a-f]+$' AND length(token) BETWEEN 32 AND 400);
-- One active token per activity (rotation replaces it in place); a retired token may come back later.
DROP INDEX push_targets_unique_token;
CREATE UNIQUE INDEX push_targets_one_per_order ON push_targets (store_id, order_id) WHERE retired_at IS NULL;
CREATE UNIQUE INDEX push_targets_id ON push_targets (target_id);

-- target_kind says which table target_id points into: push_targets for live_activity, customer_tokens else.
ALTER TABLE delivery_outbox
    ADD COLUMN target_kind    text CHECK (target_kind IN ('live_activity', 'push_to_start', 'alert', 'widget')),
    ADD COLUMN la_event       text CHECK (la_event IN ('start', 'update', 'end')),
    ADD COLUMN apns_timestamp bigint,
    ADD COLUMN order_event    text,
    ADD COLUMN sent_at        timestamptz;
ALTER TABLE delivery_outbox ADD CONSTRAINT delivery_outbox_target_kind
    CHECK ((target_id IS NULL) = (target_kind IS NULL));
-- The planner reads each target's recent decisions in the event's transaction.
CREATE INDEX delivery_outbox_by_target ON delivery_outbox (target_kind, target_id, created_at) WHERE target_id IS NOT NULL;
-- Pruning finds finished rows by age.
CREATE INDEX delivery_outbox_finished ON delivery_outbox (finished_at) WHERE finished_at IS NOT NULL;

-- Bodies are sent byte for byte as the planner built and measured them (≤ 4096 bytes); jsonb would re-format
-- them (a space after every colon) and could push a fitted body over APNs' limit.
ALTER TABLE delivery_outbox ALTER COLUMN body TYPE text USING body::text;
-- An order-level skip ("no token at all") has no push type.
ALTER TABLE delivery_outbox ALTER COLUMN push_type DROP NOT NULL;
