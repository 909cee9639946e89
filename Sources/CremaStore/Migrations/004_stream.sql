-- Crema schema 004: what the dashboard stream (GET /v1/stream) needs.

-- A cursor for the stream: every accepted event gets a number that only grows. Numbers are taken when the
-- row is inserted, not when its transaction commits, so a reader also keeps the writing transaction's id and
-- only reads events whose transaction is older than every transaction still running (see OrderStore+Stream).
ALTER TABLE order_events ADD COLUMN stream_seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE order_events ADD COLUMN stream_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX order_events_by_stream ON order_events (store_id, stream_seq);

-- Short-lived, single-use tickets that let a browser's EventSource (which cannot send headers) open the
-- stream for one store. Only a SHA-256 of the ticket is kept.
CREATE TABLE stream_tickets (
    store_id    text        NOT NULL REFERENCES stores (store_id),
    ticket_hash bytea       NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (store_id, ticket_hash)
);
CREATE INDEX stream_tickets_by_expiry ON stream_tickets (expires_at);
