-- Invariants every committed state of Crema's database satisfies. Each query counts violations; the
-- scripts that run this file (fuzz-api, the kill -9 drill) fail unless every count is 0.
SELECT 'orders whose version is not their event count' AS invariant, count(*) AS violations
FROM orders o
WHERE o.version <> (SELECT count(*) FROM order_events e WHERE e.tenant_id = o.tenant_id AND e.store_id = o.store_id AND e.order_id = o.order_id)
UNION ALL
SELECT 'orders without a placed event at version 1', count(*)
FROM orders o
WHERE NOT EXISTS (SELECT 1 FROM order_events e
                  WHERE e.tenant_id = o.tenant_id AND e.store_id = o.store_id AND e.order_id = o.order_id AND e.version = 1 AND e.event_type = 'placed')
UNION ALL
SELECT 'orders whose state is not what their last event leads to', count(*)
FROM orders o
JOIN order_events e ON e.tenant_id = o.tenant_id AND e.store_id = o.store_id AND e.order_id = o.order_id AND e.version = o.version
WHERE NOT (
       (e.event_type = 'placed' AND o.state = 'queued')
    OR (e.event_type = 'started' AND o.state = 'preparing')
    OR (e.event_type = 'delayed' AND o.state IN ('queued', 'preparing'))
    OR (e.event_type = 'ready' AND o.state = 'ready')
    OR (e.event_type = 'picked_up' AND o.state = 'picked_up')
    OR (e.event_type = 'canceled' AND o.state = 'canceled')
    OR (e.event_type = 'expired' AND o.state = 'canceled'))
UNION ALL
-- (order commands only: an administrative or webhook POST's key is claimed, unanswered, while it is performed)
SELECT 'idempotency keys without a stored answer', count(*) FROM idempotency_keys WHERE response_status = 0 AND store_id <> ''
UNION ALL
SELECT 'stores whose next number is not past their orders', count(*)
FROM stores s WHERE s.next_order_number <= (SELECT coalesce(max(number), 0) FROM orders o WHERE o.tenant_id = s.tenant_id AND o.store_id = s.store_id)
UNION ALL
-- Each event takes its store's next stream position and commits it with the row (migration 023): no gap, no spare.
SELECT 'stores whose stream position is not their last event''s', count(*)
FROM stores s WHERE s.stream_position <> (SELECT coalesce(max(stream_seq), 0) FROM order_events e WHERE e.tenant_id = s.tenant_id AND e.store_id = s.store_id)
UNION ALL
SELECT 'outbox rows of another tenant than their order''s', count(*)
FROM delivery_outbox d WHERE NOT EXISTS (
    SELECT 1 FROM orders o WHERE o.tenant_id = d.tenant_id AND o.store_id = d.store_id AND o.order_id = d.order_id)
UNION ALL
-- The claim finds due work through delivery_outbox_due (WHERE finished_at IS NULL): a row is unfinished exactly
-- while it may still be sent.
SELECT 'outbox rows finished while pending or in flight, or unfinished otherwise', count(*)
FROM delivery_outbox WHERE (finished_at IS NULL) <> (state IN ('pending', 'inflight'))
UNION ALL
SELECT 'tokens of an app of another tenant', count(*)
FROM customer_tokens c JOIN apps a ON a.bundle_id = c.bundle_id WHERE a.tenant_id <> c.tenant_id
UNION ALL
SELECT 'receipts of orders whose personal data was removed', count(*)
FROM delivery_receipts r JOIN orders o ON o.tenant_id = r.tenant_id AND o.store_id = r.store_id AND o.order_id = r.order_id
WHERE o.personal_data_removed_at IS NOT NULL
UNION ALL
SELECT 'receipts of a push never planned, or received before it was planned', count(*)
FROM delivery_receipts r JOIN delivery_outbox d
  ON d.tenant_id = r.tenant_id AND d.store_id = r.store_id AND d.order_id = r.order_id AND d.delivery_id = r.delivery_id
WHERE d.push_type IS DISTINCT FROM r.push_type OR (d.state = 'skipped' AND d.attempts = 0) OR r.received_at < d.created_at;
