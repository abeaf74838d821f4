-- Ordered delivery targets (docs/design.md, D7, "Ordered targets"): a target
-- with ordered set gets its deliveries one at a time, in the order they were
-- enqueued (their id), the next one claimed only once the one before it is
-- delivered or dead. The claim finds the lowest pending delivery of the
-- target's company and kind, and whether one of them is claimed, through
-- the two indexes below, without reading the finished deliveries; the first
-- also serves the hub's own event order (it replaces
-- deliveries_webhook_pending of 00013). Keep equivalent to
-- ../sqlite/00041_ordered_targets.sql.

-- +goose Up
ALTER TABLE delivery_targets ADD COLUMN ordered boolean NOT NULL DEFAULT false;
CREATE INDEX deliveries_pending_group ON deliveries (company_id, kind, id) WHERE status = 'pending';
CREATE INDEX deliveries_claimed_group ON deliveries (company_id, kind) WHERE claimed_by IS NOT NULL;
DROP INDEX deliveries_webhook_pending;

-- +goose Down
CREATE INDEX deliveries_webhook_pending ON deliveries (company_id, id) WHERE status = 'pending' AND kind = 'webhook';
DROP INDEX deliveries_claimed_group;
DROP INDEX deliveries_pending_group;
ALTER TABLE delivery_targets DROP COLUMN ordered;
