-- The change log keeps runs (sqlstore/sync.go; docs/design.md, "The change
-- log in runs"): a row is n changes of one kind, numbered seq - n + 1 to
-- seq, of the transactions transaction_id to transaction_id + n - 1 in that
-- order. A batch's added rows, whose ids the insert drew in order, are one
-- row instead of one each: logging them was 2.5 ms of a 2,000-row ingestion
-- transaction's 37. seq stays the key and is the run's LAST number, so a
-- reader after cursor c still finds every run holding a change above c by
-- seq > c. Rows logged before hold one change each (n = 1). Keep equivalent
-- to ../sqlite/00056_change_runs.sql.

-- +goose Up
ALTER TABLE transaction_changes ADD COLUMN n bigint NOT NULL DEFAULT 1 CHECK (n >= 1);

-- +goose Down
-- Each run back to one row per change, numbered as it was.
INSERT INTO transaction_changes (company_id, seq, transaction_id, kind, created_at, n)
SELECT company_id, seq - n + i, transaction_id + i - 1, kind, created_at, 1
FROM transaction_changes, generate_series(1, n - 1) AS i WHERE n > 1;
UPDATE transaction_changes SET transaction_id = transaction_id + n - 1 WHERE n > 1;
ALTER TABLE transaction_changes DROP COLUMN n;
