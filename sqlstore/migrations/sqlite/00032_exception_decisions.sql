-- Exceptions an accountant can close (issue 22): every decision a person
-- makes about an exception is kept, not only the one that closes it. An ask
-- for an underpaid order's remainder (a new virtual account) is a decision
-- that leaves the exception open, and a later write-off or ignore closes it;
-- both stay in the history (docs/api.md, Exceptions queue). So the one row
-- per transaction of 00011 becomes one closing row per transaction (a
-- partial unique index, still the last guard against closing twice), and a
-- row says whether it closes, what it wrote off or asked for (amount) and
-- the virtual account it asked through. SQLite cannot drop a table's UNIQUE
-- constraint: the table is rebuilt with its rows. Keep equivalent to
-- ../postgres/00032_exception_decisions.sql.

-- +goose Up
CREATE TABLE exception_resolutions_new (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id          INTEGER NOT NULL,
    transaction_id      INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    action              TEXT    NOT NULL,
    order_id            INTEGER,
    note                TEXT    NOT NULL,
    user_id             INTEGER NOT NULL,
    user_email          TEXT    NOT NULL,
    previous_kind       TEXT    NOT NULL,
    previous_reason     TEXT    NOT NULL,
    order_status_before TEXT    NOT NULL DEFAULT '',
    order_paid_before   INTEGER NOT NULL DEFAULT 0,
    created_at          TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    refund_id           INTEGER,
    -- written off (write_off) or asked for (ask_remainder), whole VND
    amount              INTEGER NOT NULL DEFAULT 0,
    -- the virtual account an ask for the remainder added to the order
    va_number           TEXT    NOT NULL DEFAULT '',
    closes              BOOLEAN NOT NULL DEFAULT 1 CHECK (closes IN (0, 1))
);
INSERT INTO exception_resolutions_new (id, company_id, transaction_id, action, order_id, note, user_id, user_email,
    previous_kind, previous_reason, order_status_before, order_paid_before, created_at, refund_id)
SELECT id, company_id, transaction_id, action, order_id, note, user_id, user_email,
    previous_kind, previous_reason, order_status_before, order_paid_before, created_at, refund_id
FROM exception_resolutions;
DROP TABLE exception_resolutions;
ALTER TABLE exception_resolutions_new RENAME TO exception_resolutions;
CREATE UNIQUE INDEX exception_resolutions_closing ON exception_resolutions (transaction_id, company_id) WHERE closes;
CREATE INDEX exception_resolutions_history ON exception_resolutions (transaction_id, company_id, id);

-- +goose Down
-- Back to one row per transaction: the decisions that did not close their
-- exception are dropped.
CREATE TABLE exception_resolutions_old (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id          INTEGER NOT NULL,
    transaction_id      INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    action              TEXT    NOT NULL,
    order_id            INTEGER,
    note                TEXT    NOT NULL,
    user_id             INTEGER NOT NULL,
    user_email          TEXT    NOT NULL,
    previous_kind       TEXT    NOT NULL,
    previous_reason     TEXT    NOT NULL,
    order_status_before TEXT    NOT NULL DEFAULT '',
    order_paid_before   INTEGER NOT NULL DEFAULT 0,
    created_at          TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    refund_id           INTEGER,
    UNIQUE (transaction_id, company_id)
);
INSERT INTO exception_resolutions_old (id, company_id, transaction_id, action, order_id, note, user_id, user_email,
    previous_kind, previous_reason, order_status_before, order_paid_before, created_at, refund_id)
SELECT id, company_id, transaction_id, action, order_id, note, user_id, user_email,
    previous_kind, previous_reason, order_status_before, order_paid_before, created_at, refund_id
FROM exception_resolutions WHERE closes;
DROP TABLE exception_resolutions;
ALTER TABLE exception_resolutions_old RENAME TO exception_resolutions;
