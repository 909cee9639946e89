-- Crema schema 005: what the customer's own API (/v1/me, DESIGN §9.1) reads.

-- A customer's orders, newest first: GET /v1/me/orders and the widget feed scan only that customer's rows.
CREATE INDEX orders_by_customer ON orders (customer_ref, placed_at DESC, order_id DESC) WHERE customer_ref IS NOT NULL;
-- The last Live Activity push APNs accepted for an order (GET /v1/me/orders/{id}).
CREATE INDEX delivery_outbox_sent_activity ON delivery_outbox (store_id, order_id, sent_at DESC)
    WHERE state = 'sent' AND push_type = 'liveactivity';
