-- Endpoint health (docs/design.md, D7): each delivery target keeps its
-- failure streak, failing_since (the first failed attempt since its last
-- success, NULL when none; set and reset with the attempts, in
-- RecordAttempts' transaction), and when Recon disabled it after every
-- attempt failed for 3 days: disabled_by 'disabled_by_recon' (distinct from
-- the merchant's own deactivation, which leaves it ''), disabled_at and
-- disabled_why. Re-enabling clears them.
-- Keep equivalent to ../sqlite/00040_endpoint_health.sql.

-- +goose Up
ALTER TABLE delivery_targets ADD COLUMN failing_since timestamptz;
ALTER TABLE delivery_targets ADD COLUMN disabled_by text NOT NULL DEFAULT '';
ALTER TABLE delivery_targets ADD COLUMN disabled_at timestamptz;
ALTER TABLE delivery_targets ADD COLUMN disabled_why text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE delivery_targets DROP COLUMN disabled_why;
ALTER TABLE delivery_targets DROP COLUMN disabled_at;
ALTER TABLE delivery_targets DROP COLUMN disabled_by;
ALTER TABLE delivery_targets DROP COLUMN failing_since;
