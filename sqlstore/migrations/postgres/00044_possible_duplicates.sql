-- Possible duplicates (docs/statements.md, Possible duplicates): the same
-- transfer arriving under a second reference (a feed's, then a
-- statement's) is stored as a possible duplicate of the first row.
-- dup_key is the key of the look-up (recon.DupKey: the day in the high
-- bits, a hash of direction, amount and normalised memo in the low ones),
-- set on every row stored from now on (rows stored before are not
-- compared); the index makes the look-up one query of equality probes per
-- account and batch, and the day leading keeps a day's inserts in one
-- region of the index. dup_of and
-- dup_state are NULL but for possible duplicates: the first row, and
-- possible, duplicate or distinct (recon.DupPossible, ...).
-- companies.duplicate_window_days: how many days apart two transfers may
-- be dated and still be compared (0: the same day; at most 7).
-- Keep equivalent to ../sqlite/00044_possible_duplicates.sql.

-- +goose Up
ALTER TABLE transactions ADD COLUMN dup_key bigint;
ALTER TABLE transactions ADD COLUMN dup_of bigint;
ALTER TABLE transactions ADD COLUMN dup_state text;
CREATE INDEX transactions_dup_key ON transactions (bank_account_id, dup_key);
ALTER TABLE companies ADD COLUMN duplicate_window_days INTEGER NOT NULL DEFAULT 0;

-- +goose Down
DROP INDEX transactions_dup_key;
ALTER TABLE transactions DROP COLUMN dup_key;
ALTER TABLE transactions DROP COLUMN dup_of;
ALTER TABLE transactions DROP COLUMN dup_state;
ALTER TABLE companies DROP COLUMN duplicate_window_days;
