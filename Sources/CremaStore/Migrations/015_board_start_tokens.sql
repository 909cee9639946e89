-- Crema schema 015: starting a store's board on a customer's device (docs/broadcast.md, "Starting the board").
-- A customer's app registers, per store, the push-to-start token of `StoreBoardAttributes` activities: that
-- registration is the customer's consent. When the customer has an open order at the store placed after the
-- board was last started for them, the broadcaster sends a push-to-start onto the store's channel.
CREATE TABLE board_start_tokens (
    tenant_id      text        NOT NULL,
    store_id       text        NOT NULL,
    customer_ref   text        NOT NULL,
    token          text        NOT NULL CHECK (token ~ '^[0-9a-f]+$' AND length(token) BETWEEN 32 AND 400),
    environment    text        NOT NULL CHECK (environment IN ('sandbox', 'production')),
    registered_at  timestamptz NOT NULL,
    started_at     timestamptz,
    retired_at     timestamptz,
    retired_reason text,
    PRIMARY KEY (tenant_id, store_id, customer_ref),
    FOREIGN KEY (tenant_id, store_id) REFERENCES stores (tenant_id, store_id)
);
CREATE INDEX board_start_tokens_by_customer ON board_start_tokens (tenant_id, customer_ref);
