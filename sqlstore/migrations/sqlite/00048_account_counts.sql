-- Transactions per account, so that the listing's total without date,
-- amount or reference filters reads one row per account instead of one per
-- account and day (at 10,000,000 rows over five years, 3,470 day rows were
-- most of page 1's time: docs/benchmarks.md, "10,000,000 rows (SQLite,
-- 2026-11-27)"). Kept by triggers on transaction_day_counts, so that each
-- row here is the sum of its account's day rows whatever writes them
-- (ingestion, retention, test-mode wipe). And an index of the day rows by
-- company and day, holding the counts: a deep page reads the days newest
-- first until the one holding its first row (sqlstore.pageStart). Keep
-- equivalent to ../postgres/00048_account_counts.sql.

-- +goose Up
CREATE TABLE transaction_account_counts (
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    n               INTEGER NOT NULL,
    PRIMARY KEY (company_id, bank_account_id)
) WITHOUT ROWID;
INSERT INTO transaction_account_counts (company_id, bank_account_id, n)
SELECT company_id, bank_account_id, SUM(n) FROM transaction_day_counts GROUP BY company_id, bank_account_id;

CREATE INDEX transaction_day_counts_days ON transaction_day_counts (company_id, day, bank_account_id, n);

-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_insert AFTER INSERT ON transaction_day_counts
BEGIN
    INSERT INTO transaction_account_counts (company_id, bank_account_id, n) VALUES (new.company_id, new.bank_account_id, new.n)
    ON CONFLICT (company_id, bank_account_id) DO UPDATE SET n = n + excluded.n;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_update AFTER UPDATE OF n ON transaction_day_counts WHEN new.n <> old.n
BEGIN
    UPDATE transaction_account_counts SET n = n + new.n - old.n
    WHERE company_id = new.company_id AND bank_account_id = new.bank_account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_delete AFTER DELETE ON transaction_day_counts
BEGIN
    UPDATE transaction_account_counts SET n = n - old.n
    WHERE company_id = old.company_id AND bank_account_id = old.bank_account_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER transaction_day_counts_delete;
DROP TRIGGER transaction_day_counts_update;
DROP TRIGGER transaction_day_counts_insert;
DROP TABLE transaction_account_counts;
DROP INDEX transaction_day_counts_days;
