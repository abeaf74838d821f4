-- Transactions per account and bucket of 32 days (bucket = day >> 5), so
-- that the listing's total with dates sums a row per account and bucket for
-- the buckets the range holds whole, and day rows only for its ends. Kept,
-- like transaction_account_counts, by the trigger function on
-- transaction_day_counts, which now writes both. Keep equivalent to
-- ../sqlite/00050_bucket_counts.sql.

-- +goose Up
CREATE TABLE transaction_bucket_counts (
    company_id      bigint  NOT NULL,
    bucket          integer NOT NULL,
    bank_account_id bigint  NOT NULL,
    n               bigint  NOT NULL,
    PRIMARY KEY (company_id, bucket, bank_account_id)
);
INSERT INTO transaction_bucket_counts (company_id, bucket, bank_account_id, n)
SELECT company_id, day >> 5, bank_account_id, SUM(n) FROM transaction_day_counts GROUP BY company_id, day >> 5, bank_account_id;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION count_account_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_account_counts (company_id, bank_account_id, n) VALUES (NEW.company_id, NEW.bank_account_id, NEW.n)
        ON CONFLICT (company_id, bank_account_id) DO UPDATE SET n = transaction_account_counts.n + excluded.n;
        INSERT INTO transaction_bucket_counts (company_id, bucket, bank_account_id, n) VALUES (NEW.company_id, NEW.day >> 5, NEW.bank_account_id, NEW.n)
        ON CONFLICT (company_id, bucket, bank_account_id) DO UPDATE SET n = transaction_bucket_counts.n + excluded.n;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE transaction_account_counts SET n = n + NEW.n - OLD.n
        WHERE company_id = NEW.company_id AND bank_account_id = NEW.bank_account_id;
        UPDATE transaction_bucket_counts SET n = n + NEW.n - OLD.n
        WHERE company_id = NEW.company_id AND bucket = NEW.day >> 5 AND bank_account_id = NEW.bank_account_id;
    ELSE
        UPDATE transaction_account_counts SET n = n - OLD.n
        WHERE company_id = OLD.company_id AND bank_account_id = OLD.bank_account_id;
        UPDATE transaction_bucket_counts SET n = n - OLD.n
        WHERE company_id = OLD.company_id AND bucket = OLD.day >> 5 AND bank_account_id = OLD.bank_account_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION count_account_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
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
DROP TABLE transaction_bucket_counts;
