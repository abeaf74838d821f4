-- Transactions per bank account and pair of amounts (issue 12), kept by
-- ingestion, retention and the test-mode wipe in their transactions, so
-- that the listing's total with an amount filter (amount_in, amount_out, with
-- or without an account) is a sum over a few rows instead of a COUNT over
-- every matching index entry. Keyed by account like transaction_day_counts:
-- every writer of these rows holds the account's lock, so concurrent batches
-- never wait on each other's counts. Existing rows are counted from the
-- transactions. Keep equivalent to ../sqlite/00017_amount_counts.sql.

-- +goose Up
CREATE TABLE transaction_amount_counts (
    company_id      bigint  NOT NULL,
    amount_in       bigint  NOT NULL,
    amount_out      bigint  NOT NULL,
    bank_account_id bigint  NOT NULL,
    n               bigint  NOT NULL,
    PRIMARY KEY (company_id, amount_in, amount_out, bank_account_id)
);
INSERT INTO transaction_amount_counts (company_id, amount_in, amount_out, bank_account_id, n)
SELECT company_id, amount_in, amount_out, bank_account_id, COUNT(*)
FROM transactions GROUP BY company_id, amount_in, amount_out, bank_account_id;

-- +goose Down
DROP TABLE transaction_amount_counts;
