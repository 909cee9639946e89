-- Crema schema 013: relevance for the watch (issue #33, part 5).
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
