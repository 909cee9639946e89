-- The delivery-ordering rule (docs/delivery.md, "Ordering") no longer lives in database functions: it is inline SQL,
-- written once in Sources/CremaStore/DeliveryOrderingSQL.swift, which DeliveryRepository's claim, withdrawal and
-- record run and Tests/CremaStoreTests/DeliveryOrderingStoreTests.swift holds to CremaCore's DeliveryOrdering.
-- A function that reads the outbox from inside a statement on a Citus shard would read a table the shard does not
-- have (docs/scaling.md); an inline EXISTS on the row's own tenant_id is co-located with it.
--
-- This repeatable migration (applied whenever its text changes) drops the functions migrations 005 and 007 created
-- and earlier versions of this file replaced; those migrations are history and are never edited.
DROP FUNCTION IF EXISTS delivery_staleness(text, text, uuid, bigint, text, bigint, text, text);
DROP FUNCTION IF EXISTS delivery_sequence_busy(text, text, uuid, bigint, text, bigint, text);
