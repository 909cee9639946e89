-- Crema schema 016: a push's claim is named by the dispatcher that makes it (docs/design.md §6). A claim whose
-- answer was lost (the primary failed between the claim's commit and its answer) leaves its rows in flight under
-- a lease the dispatcher never saw; with the lease's id chosen by the dispatcher before it claims, it takes those
-- rows back as soon as it reaches the database again, instead of leaving them to wait for the lease to run out.
-- Nullable, no default: no table rewrite; rows in flight when this runs keep NULL and are rescued as before.
ALTER TABLE delivery_outbox ADD COLUMN lease uuid;
