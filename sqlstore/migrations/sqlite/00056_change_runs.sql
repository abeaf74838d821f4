-- The change log keeps runs: a row is n changes of one kind, numbered
-- seq - n + 1 to seq, of the transactions transaction_id to
-- transaction_id + n - 1 in that order (see
-- ../postgres/00056_change_runs.sql for why). Keep equivalent to it.

-- +goose Up
ALTER TABLE transaction_changes ADD COLUMN n INTEGER NOT NULL DEFAULT 1 CHECK (n >= 1);

-- +goose Down
-- Each run back to one row per change, numbered as it was.
INSERT INTO transaction_changes (company_id, seq, transaction_id, kind, created_at, n)
WITH RECURSIVE k(company_id, seq, transaction_id, kind, created_at, i) AS (
    SELECT company_id, seq - n + 1, transaction_id, kind, created_at, n - 1 FROM transaction_changes WHERE n > 1
    UNION ALL SELECT company_id, seq + 1, transaction_id + 1, kind, created_at, i - 1 FROM k WHERE i > 1
)
SELECT company_id, seq, transaction_id, kind, created_at, 1 FROM k;
UPDATE transaction_changes SET transaction_id = transaction_id + n - 1 WHERE n > 1;
ALTER TABLE transaction_changes DROP COLUMN n;
