-- Crema schema 009: claims that cost the same however deep the backlog.
-- (Built inside the migration transaction, so it reads the whole outbox once and holds off inserts meanwhile:
-- with 72 hours of finished rows kept, seconds. CREATE INDEX CONCURRENTLY cannot run in a transaction.)
-- Every claim first withdraws pending Live Activity rows that must never go; without this index that read
-- scanned every pending row (a seq scan once the backlog was a large part of the table), so each claim cost
-- grew with the backlog. Only pending Live Activity rows are indexed, a handful at any time.
CREATE INDEX delivery_outbox_pending_activity ON delivery_outbox (tenant_id, store_id, order_id)
    WHERE state = 'pending' AND push_type = 'liveactivity';
