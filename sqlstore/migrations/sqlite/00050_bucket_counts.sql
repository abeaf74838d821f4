-- Transactions per account and bucket of 32 days (bucket = day >> 5), so
-- that the listing's total with dates sums a row per account and bucket for
-- the buckets the range holds whole, and day rows only for its ends: at
-- 10,000,000 rows over five years a range of half of them summed 3,470 day
-- rows, the slowest filter's cost (docs/design.md, "Totals per bucket of
-- days"). Kept, like transaction_account_counts, by the triggers on
-- transaction_day_counts, which now write both. Keep equivalent to
-- ../postgres/00050_bucket_counts.sql.

-- +goose Up
CREATE TABLE transaction_bucket_counts (
    company_id      INTEGER NOT NULL,
    bucket          INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    n               INTEGER NOT NULL,
    PRIMARY KEY (company_id, bucket, bank_account_id)
) WITHOUT ROWID;
INSERT INTO transaction_bucket_counts (company_id, bucket, bank_account_id, n)
SELECT company_id, day >> 5, bank_account_id, SUM(n) FROM transaction_day_counts GROUP BY company_id, day >> 5, bank_account_id;

DROP TRIGGER transaction_day_counts_insert;
DROP TRIGGER transaction_day_counts_update;
DROP TRIGGER transaction_day_counts_delete;
-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_insert AFTER INSERT ON transaction_day_counts
BEGIN
    INSERT INTO transaction_account_counts (company_id, bank_account_id, n) VALUES (new.company_id, new.bank_account_id, new.n)
    ON CONFLICT (company_id, bank_account_id) DO UPDATE SET n = n + excluded.n;
    INSERT INTO transaction_bucket_counts (company_id, bucket, bank_account_id, n) VALUES (new.company_id, new.day >> 5, new.bank_account_id, new.n)
    ON CONFLICT (company_id, bucket, bank_account_id) DO UPDATE SET n = n + excluded.n;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_update AFTER UPDATE OF n ON transaction_day_counts WHEN new.n <> old.n
BEGIN
    UPDATE transaction_account_counts SET n = n + new.n - old.n
    WHERE company_id = new.company_id AND bank_account_id = new.bank_account_id;
    UPDATE transaction_bucket_counts SET n = n + new.n - old.n
    WHERE company_id = new.company_id AND bucket = new.day >> 5 AND bank_account_id = new.bank_account_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER transaction_day_counts_delete AFTER DELETE ON transaction_day_counts
BEGIN
    UPDATE transaction_account_counts SET n = n - old.n
    WHERE company_id = old.company_id AND bank_account_id = old.bank_account_id;
    UPDATE transaction_bucket_counts SET n = n - old.n
    WHERE company_id = old.company_id AND bucket = old.day >> 5 AND bank_account_id = old.bank_account_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER transaction_day_counts_insert;
DROP TRIGGER transaction_day_counts_update;
DROP TRIGGER transaction_day_counts_delete;
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
DROP TABLE transaction_bucket_counts;
