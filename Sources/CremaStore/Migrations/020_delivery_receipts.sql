-- Crema schema 020: what the phones said they received (issue #47, docs/delivery.md "Receipts").
-- One row per delivery at most: the first receipt wins (a phone may post one twice, the app and its extension may
-- both post one). A table of its own, not columns of delivery_outbox, so the dispatcher's claims and records stay
-- HOT and touch nothing new; keyed like the outbox (tenant first) and deleted with its delivery (the outbox's
-- retention, by the foreign key) or with the customer's orders' personal data (erasure and retention scrub it).
-- `surface` says how Crema knows: posted by the app (notification, activity, app) or inferred from what the app
-- did next (activity_token: the start's activity registered its token; widget_fetch: the widget asked for its data).
CREATE TABLE delivery_receipts (
    tenant_id    text        NOT NULL,
    store_id     text        NOT NULL,
    order_id     uuid        NOT NULL,
    delivery_id  bigint      NOT NULL,
    push_type    text        NOT NULL,
    la_event     text,
    surface      text        NOT NULL
        CHECK (surface IN ('notification', 'activity', 'app', 'activity_token', 'widget_fetch')),
    received_at  timestamptz NOT NULL,
    recorded_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, store_id, order_id, delivery_id),
    FOREIGN KEY (tenant_id, store_id, order_id, delivery_id)
        REFERENCES delivery_outbox (tenant_id, store_id, order_id, delivery_id) ON DELETE CASCADE
);
-- No other index: the funnel and the delivery log reach a receipt through its delivery (the primary key).
