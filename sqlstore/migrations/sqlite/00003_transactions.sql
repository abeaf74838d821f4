-- Bank accounts, bank transactions, balance discontinuities and the daily
-- counts that keep the listing's total fast. Keep equivalent to
-- ../postgres/00003_transactions.sql.
--
-- transaction_date is the wall-clock time in the business time zone, stored
-- like every time (integer Unix microseconds) as if it were UTC.

-- +goose Up
CREATE TABLE bank_accounts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id     INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    bank_name      TEXT    NOT NULL,
    account_number TEXT    NOT NULL,
    holder_name    TEXT    NOT NULL DEFAULT '',
    -- space-separated virtual account numbers
    sub_accounts   TEXT    NOT NULL DEFAULT '',
    -- running balance after the last transaction, in arrival order
    balance        INTEGER NOT NULL DEFAULT 0,
    balance_known  BOOLEAN NOT NULL DEFAULT 0 CHECK (balance_known IN (0, 1)),
    created_at     TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    UNIQUE (company_id, bank_name, account_number),
    UNIQUE (company_id, id)
);

CREATE TABLE transactions (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id       INTEGER NOT NULL,
    bank_account_id  INTEGER NOT NULL,
    transaction_date TIMESTAMP NOT NULL CHECK (typeof(transaction_date) = 'integer'),
    amount_in        INTEGER NOT NULL,
    amount_out       INTEGER NOT NULL,
    accumulated      INTEGER NOT NULL,
    content          TEXT    NOT NULL,
    reference_number TEXT    NOT NULL,
    code             TEXT,
    sub_account      TEXT,
    created_at       TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    UNIQUE (bank_account_id, reference_number),
    FOREIGN KEY (company_id, bank_account_id) REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE
);

-- Which index serves which filter of GET /api/v1/transactions:
--   no filter, from_date/to_date      transactions_company_date
--   bank_account_id, account_number   transactions_account_date (account_number resolves to ids)
--   amount_in, amount_out             transactions_company_amounts: a transaction has exactly one
--                                     positive amount, so amount_out = X is amount_in = 0 AND amount_out = X
--   reference_number                  the unique (bank_account_id, reference_number) index, per
--                                     account of the company
-- Every index costs ingestion speed; this is the smallest set that serves every filter.
CREATE INDEX transactions_company_date ON transactions (company_id, transaction_date DESC, id DESC);
CREATE INDEX transactions_account_date ON transactions (bank_account_id, transaction_date DESC, id DESC);
CREATE INDEX transactions_company_amounts ON transactions (company_id, amount_in, amount_out, transaction_date DESC, id DESC);

-- Transactions per account and day, maintained by ingestion, so that the
-- listing's total without amount or reference filters is a sum over days.
CREATE TABLE transaction_day_counts (
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    day             INTEGER NOT NULL,
    n               INTEGER NOT NULL,
    PRIMARY KEY (company_id, bank_account_id, day)
);

CREATE TABLE balance_discontinuities (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    transaction_id  INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    expected        INTEGER NOT NULL,
    reported        INTEGER NOT NULL,
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);
CREATE INDEX balance_discontinuities_company ON balance_discontinuities (company_id, id DESC);

-- +goose Down
DROP TABLE balance_discontinuities;
DROP TABLE transaction_day_counts;
DROP TABLE transactions;
DROP TABLE bank_accounts;
