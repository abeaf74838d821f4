-- Transactions per account, so that the listing's total without date,
-- amount or reference filters reads one row per account instead of one per
-- account and day. Kept by a trigger on transaction_day_counts, so that each
-- row here is the sum of its account's day rows whatever writes them
-- (ingestion, retention, test-mode wipe). And an index of the day rows by
-- company and day, holding the counts: a deep page reads the days newest
-- first until the one holding its first row (sqlstore.pageStart). Keep
-- equivalent to ../sqlite/00048_account_counts.sql.

-- +goose Up
CREATE TABLE transaction_account_counts (
    company_id      bigint NOT NULL,
    bank_account_id bigint NOT NULL,
    n               bigint NOT NULL,
    PRIMARY KEY (company_id, bank_account_id)
);
INSERT INTO transaction_account_counts (company_id, bank_account_id, n)
SELECT company_id, bank_account_id, SUM(n) FROM transaction_day_counts GROUP BY company_id, bank_account_id;

CREATE INDEX transaction_day_counts_days ON transaction_day_counts (company_id, day, bank_account_id, n);

-- +goose StatementBegin
CREATE FUNCTION count_account_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_account_counts (company_id, bank_account_id, n) VALUES (NEW.company_id, NEW.bank_account_id, NEW.n)
        ON CONFLICT (company_id, bank_account_id) DO UPDATE SET n = transaction_account_counts.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE transaction_account_counts SET n = n + NEW.n - OLD.n
        WHERE company_id = NEW.company_id AND bank_account_id = NEW.bank_account_id;
    ELSE
        UPDATE transaction_account_counts SET n = n - OLD.n
        WHERE company_id = OLD.company_id AND bank_account_id = OLD.bank_account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER transaction_day_counts_accounts AFTER INSERT OR DELETE ON transaction_day_counts
    FOR EACH ROW EXECUTE FUNCTION count_account_transactions();
CREATE TRIGGER transaction_day_counts_accounts_n AFTER UPDATE OF n ON transaction_day_counts
    FOR EACH ROW WHEN (NEW.n <> OLD.n) EXECUTE FUNCTION count_account_transactions();

-- +goose Down
DROP TRIGGER transaction_day_counts_accounts_n ON transaction_day_counts;
DROP TRIGGER transaction_day_counts_accounts ON transaction_day_counts;
DROP FUNCTION count_account_transactions();
DROP TABLE transaction_account_counts;
DROP INDEX transaction_day_counts_days;
