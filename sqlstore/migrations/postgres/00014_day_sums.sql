-- The per-day sums of the dashboard's home (issue 11): beside the count of
-- transactions per account and day, the money in and out, how many
-- transfers each, and the money in that paid an order (a decision matched,
-- underpaid or overpaid) and how many; kept by ingestion, matching (also
-- by hand) and retention in their transactions, so the home reads one row
-- per account and day instead of every transaction. Existing rows are
-- filled from the transactions. Keep equivalent to ../sqlite/00014_day_sums.sql.

-- +goose Up
ALTER TABLE transaction_day_counts
    ADD COLUMN in_sum bigint NOT NULL DEFAULT 0,
    ADD COLUMN out_sum bigint NOT NULL DEFAULT 0,
    ADD COLUMN in_n bigint NOT NULL DEFAULT 0,
    ADD COLUMN out_n bigint NOT NULL DEFAULT 0,
    ADD COLUMN matched_sum bigint NOT NULL DEFAULT 0,
    ADD COLUMN matched_n bigint NOT NULL DEFAULT 0;
-- transaction_date is the wall-clock time stored as a timestamp; day is its
-- day number (sqlstore.dayNumber).
UPDATE transaction_day_counts c SET in_sum = s.in_sum, out_sum = s.out_sum, in_n = s.in_n, out_n = s.out_n,
    matched_sum = s.matched_sum, matched_n = s.matched_n
FROM (
    SELECT t.company_id, t.bank_account_id, floor(extract(epoch FROM t.transaction_date) / 86400)::integer AS day,
           SUM(t.amount_in) AS in_sum, SUM(t.amount_out) AS out_sum,
           COUNT(*) FILTER (WHERE t.amount_in > 0) AS in_n, COUNT(*) FILTER (WHERE t.amount_out > 0) AS out_n,
           COALESCE(SUM(t.amount_in) FILTER (WHERE p.paid), 0) AS matched_sum, COUNT(*) FILTER (WHERE p.paid) AS matched_n
    FROM transactions t
    CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM match_decisions m WHERE m.transaction_id = t.id
                                       AND m.outcome IN ('matched', 'underpaid', 'overpaid')) AS paid) p
    GROUP BY 1, 2, 3
) s
WHERE c.company_id = s.company_id AND c.bank_account_id = s.bank_account_id AND c.day = s.day;

-- +goose Down
ALTER TABLE transaction_day_counts DROP COLUMN matched_n, DROP COLUMN matched_sum, DROP COLUMN out_n,
    DROP COLUMN in_n, DROP COLUMN out_sum, DROP COLUMN in_sum;
