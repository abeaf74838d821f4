-- transaction_day_counts kept in its primary key's B-tree (WITHOUT ROWID),
-- as transaction_amount_counts is: the listing's total is a sum over a
-- company's days (sqlstore.sumDays), and in a table with rowids each of those
-- rows was a second lookup, from the key's index into the table. At
-- 10,000,000 rows over five years that was 80% of page 1's time
-- (docs/benchmarks.md, "10,000,000 rows (SQLite, 2026-11-27)"). Same columns, same key. The
-- PostgreSQL twin changes nothing: its table keeps its heap (see
-- ../postgres/00047_day_counts_without_rowid.sql).

-- +goose Up
CREATE TABLE transaction_day_counts_new (
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    day             INTEGER NOT NULL,
    n               INTEGER NOT NULL,
    in_sum          INTEGER NOT NULL DEFAULT 0,
    out_sum         INTEGER NOT NULL DEFAULT 0,
    in_n            INTEGER NOT NULL DEFAULT 0,
    out_n           INTEGER NOT NULL DEFAULT 0,
    matched_sum     INTEGER NOT NULL DEFAULT 0,
    matched_n       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (company_id, bank_account_id, day)
) WITHOUT ROWID;
INSERT INTO transaction_day_counts_new SELECT company_id, bank_account_id, day, n, in_sum, out_sum, in_n, out_n, matched_sum, matched_n
FROM transaction_day_counts;
DROP TABLE transaction_day_counts;
ALTER TABLE transaction_day_counts_new RENAME TO transaction_day_counts;

-- +goose Down
CREATE TABLE transaction_day_counts_old (
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    day             INTEGER NOT NULL,
    n               INTEGER NOT NULL,
    in_sum          INTEGER NOT NULL DEFAULT 0,
    out_sum         INTEGER NOT NULL DEFAULT 0,
    in_n            INTEGER NOT NULL DEFAULT 0,
    out_n           INTEGER NOT NULL DEFAULT 0,
    matched_sum     INTEGER NOT NULL DEFAULT 0,
    matched_n       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (company_id, bank_account_id, day)
);
INSERT INTO transaction_day_counts_old SELECT company_id, bank_account_id, day, n, in_sum, out_sum, in_n, out_n, matched_sum, matched_n
FROM transaction_day_counts;
DROP TABLE transaction_day_counts;
ALTER TABLE transaction_day_counts_old RENAME TO transaction_day_counts;
