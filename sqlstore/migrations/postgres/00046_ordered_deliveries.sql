-- An ordered target's deliveries marked (docs/design.md, D7, "Ordered
-- targets"): deliveries.ordered copies its target's setting, set when the
-- delivery is enqueued and when the target is saved, so that the claim
-- walks only the unordered due deliveries (deliveries_due_unordered) and
-- takes an ordered target's head from delivery_targets, instead of passing
-- over every delivery waiting behind a head at each claim. Replaces
-- deliveries_due of 00004 (the pending counts use deliveries_pending_group).
-- Keep equivalent to ../sqlite/00046_ordered_deliveries.sql.

-- +goose Up
ALTER TABLE deliveries ADD COLUMN ordered boolean NOT NULL DEFAULT false;
UPDATE deliveries d SET ordered = true FROM delivery_targets t
	WHERE t.company_id = d.company_id AND t.kind = d.kind AND t.ordered AND d.status = 'pending';
CREATE INDEX deliveries_due_unordered ON deliveries (next_attempt_at, id) WHERE status = 'pending' AND NOT ordered;
CREATE INDEX delivery_targets_ordered ON delivery_targets (company_id, kind) WHERE ordered;
DROP INDEX deliveries_due;

-- +goose Down
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
DROP INDEX delivery_targets_ordered;
DROP INDEX deliveries_due_unordered;
ALTER TABLE deliveries DROP COLUMN ordered;
