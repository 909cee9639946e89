-- Crema schema 013: relevance for the watch and the app's own budget (issue #33, parts 5 and 6).
--
-- A store's place, for the relevance widgets of the Apple Watch (`GET /v1/me/relevance`): both coordinates or
-- neither, in WGS 84 degrees. NaN is greater than every number in PostgreSQL, so the ranges refuse it too.
ALTER TABLE stores
    ADD COLUMN latitude  double precision,
    ADD COLUMN longitude double precision,
    ADD CONSTRAINT stores_location CHECK (
        (latitude IS NULL) = (longitude IS NULL)
        AND latitude BETWEEN -90 AND 90
        AND longitude BETWEEN -180 AND 180);

-- Whether the customer left "frequent updates" on for the app (`ActivityAuthorizationInfo().frequentPushesEnabled`),
-- as the app said when it registered the activity's token. Apple's default is on; every token registered before
-- this migration keeps today's planning.
ALTER TABLE push_targets ADD COLUMN frequent_updates boolean NOT NULL DEFAULT true;
