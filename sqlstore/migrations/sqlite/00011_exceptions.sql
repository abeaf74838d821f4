-- The exceptions queue (issue 11): incoming transfers that matching could not
-- settle, and the manual resolutions of them. Keep equivalent to
-- ../postgres/00011_exceptions.sql.

-- +goose Up
-- One row per exception, written by ingestion in the transaction that stores
-- the transfer (sqlstore/exception.go, recordExceptions). kind is the match
-- outcome: unmatched, underpaid, overpaid or duplicate. bank_account_id and
-- transaction_date are copies of the transaction's, so that the listing
-- reads this table's index alone. Transaction ids are unique across tenants:
-- the key leads with it (the cascade from transactions, retention and the
-- test-data wipe find the row by it) and holds company_id (docs/design.md, D0).
CREATE TABLE exceptions (
    transaction_id   INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    company_id       INTEGER NOT NULL,
    bank_account_id  INTEGER NOT NULL,
    transaction_date TIMESTAMP NOT NULL CHECK (typeof(transaction_date) = 'integer'),
    kind             TEXT    NOT NULL,
    -- the order the transfer's decision names (NULL when unmatched); no
    -- foreign key, as orders.paid_transaction_id has none
    order_id         INTEGER,
    reason           TEXT    NOT NULL,
    resolved         BOOLEAN NOT NULL DEFAULT 0 CHECK (resolved IN (0, 1)),
    PRIMARY KEY (transaction_id, company_id)
) WITHOUT ROWID;
-- The listing: one range per kind, newest first, open or resolved; the
-- listing merges the kinds' pages (sqlstore/exception.go).
CREATE INDEX exceptions_list ON exceptions (company_id, resolved, kind, transaction_date DESC, transaction_id DESC);

-- Manual resolutions: who, when, why, and the state before. One per
-- transaction: the unique key is the last guard against resolving twice.
CREATE TABLE exception_resolutions (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id          INTEGER NOT NULL,
    transaction_id      INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    action              TEXT    NOT NULL,
    order_id            INTEGER,
    note                TEXT    NOT NULL,
    user_id             INTEGER NOT NULL,
    -- copied: the record stays readable if the user changes or goes
    user_email          TEXT    NOT NULL,
    previous_kind       TEXT    NOT NULL,
    previous_reason     TEXT    NOT NULL,
    order_status_before TEXT    NOT NULL DEFAULT '',
    order_paid_before   INTEGER NOT NULL DEFAULT 0,
    created_at          TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    UNIQUE (transaction_id, company_id)
);

-- Suggestions: open orders with the transfer's amount, of a customer, and
-- whether an account receives order payments (a credit without a code to it
-- is an exception). Each costs checkout one index entry.
CREATE INDEX orders_open_amount ON orders (company_id, status, amount);
CREATE INDEX orders_customer ON orders (company_id, customer_id);
CREATE INDEX orders_bank_account ON orders (company_id, bank_account_id);

-- +goose Down
DROP INDEX orders_bank_account;
DROP INDEX orders_customer;
DROP INDEX orders_open_amount;
DROP TABLE exception_resolutions;
DROP TABLE exceptions;
