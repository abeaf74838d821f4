-- The per-day sums of the dashboard's home (issue 11): beside the count of
-- transactions per account and day, the money in and out, how many
-- transfers each, and the money in that paid an order (a decision matched,
-- underpaid or overpaid) and how many; kept by ingestion, matching (also
-- by hand) and retention in their transactions, so the home reads one row
-- per account and day instead of every transaction. Existing rows are
-- filled from the transactions. Keep equivalent to ../postgres/00014_day_sums.sql.

-- +goose Up
ALTER TABLE transaction_day_counts ADD COLUMN in_sum INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transaction_day_counts ADD COLUMN out_sum INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transaction_day_counts ADD COLUMN in_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transaction_day_counts ADD COLUMN out_n INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transaction_day_counts ADD COLUMN matched_sum INTEGER NOT NULL DEFAULT 0;
ALTER TABLE transaction_day_counts ADD COLUMN matched_n INTEGER NOT NULL DEFAULT 0;
-- transaction_date is Unix microseconds of the wall-clock time; day is its
-- day number (sqlstore.dayNumber).
UPDATE transaction_day_counts SET (in_sum, out_sum, in_n, out_n, matched_sum, matched_n) = (
    SELECT COALESCE(SUM(t.amount_in), 0), COALESCE(SUM(t.amount_out), 0),
           COALESCE(SUM(t.amount_in > 0), 0), COALESCE(SUM(t.amount_out > 0), 0),
           COALESCE(SUM(CASE WHEN t.paid THEN t.amount_in ELSE 0 END), 0), COALESCE(SUM(t.paid), 0)
    FROM (SELECT amount_in, amount_out, EXISTS (SELECT 1 FROM match_decisions m WHERE m.transaction_id = transactions.id
                 AND m.outcome IN ('matched', 'underpaid', 'overpaid')) AS paid
          FROM transactions
          WHERE company_id = transaction_day_counts.company_id AND bank_account_id = transaction_day_counts.bank_account_id
            AND transaction_date >= transaction_day_counts.day * 86400000000
            AND transaction_date < (transaction_day_counts.day + 1) * 86400000000) t);

-- +goose Down
ALTER TABLE transaction_day_counts DROP COLUMN matched_n;
ALTER TABLE transaction_day_counts DROP COLUMN matched_sum;
ALTER TABLE transaction_day_counts DROP COLUMN out_n;
ALTER TABLE transaction_day_counts DROP COLUMN in_n;
ALTER TABLE transaction_day_counts DROP COLUMN out_sum;
ALTER TABLE transaction_day_counts DROP COLUMN in_sum;
