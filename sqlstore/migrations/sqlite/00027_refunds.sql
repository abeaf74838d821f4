-- Refunds (API v2, docs/api-v2.md, Refunds): money sent back to a payer, by
-- order or by transaction, settled when its outgoing transfer is ingested
-- (sqlstore/refund.go). Keep equivalent to ../postgres/00027_refunds.sql.

-- +goose Up
-- The four-eyes threshold in VND: a refund at or above it waits for a
-- second person's approval. NULL: none (the default). A test tenant reads
-- its company's.
ALTER TABLE companies ADD COLUMN refund_approval_threshold INTEGER;
-- What the order's refunds hold or have sent back (pending_approval,
-- pending, processing, succeeded): kept by the refund's writers under the
-- order's lock, so its paid amount less this is what is refundable.
ALTER TABLE orders ADD COLUMN refunded_amount INTEGER NOT NULL DEFAULT 0;

-- One row per refund. order_id, transaction_id, bank_account_id and
-- settled_transaction_id have no foreign key, as orders.paid_transaction_id
-- has none: retention deletes old transactions, and the refund stays as the
-- record of money that went back. status: pending_approval | pending |
-- processing | succeeded | failed | rejected | cancelled. payout: the
-- payout connector that took it ('' none: the merchant sends it by hand).
CREATE TABLE refunds (
    id                     INTEGER PRIMARY KEY AUTOINCREMENT,
    xid                    TEXT    NOT NULL UNIQUE,
    company_id             INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    reference              TEXT    NOT NULL,
    order_id               INTEGER,
    transaction_id         INTEGER,
    bank_account_id        INTEGER NOT NULL,
    amount                 INTEGER NOT NULL CHECK (amount > 0),
    reason                 TEXT    NOT NULL,
    receiver_bin           TEXT    NOT NULL,
    receiver_account       TEXT    NOT NULL,
    receiver_name          TEXT    NOT NULL,
    status                 TEXT    NOT NULL,
    failure_reason         TEXT    NOT NULL DEFAULT '',
    requested_by_user_id   INTEGER,
    requested_by_email     TEXT    NOT NULL DEFAULT '',
    requested_by_client    TEXT    NOT NULL DEFAULT '',
    decided_by_user_id     INTEGER,
    decided_by_email       TEXT    NOT NULL DEFAULT '',
    payout                 TEXT    NOT NULL DEFAULT '',
    settled_transaction_id INTEGER,
    created_at             TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    updated_at             TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    -- the reference an outgoing transfer's memo carries, looked up by ingestion
    UNIQUE (company_id, reference)
);
-- The listing, newest first, and its order filter.
CREATE INDEX refunds_list ON refunds (company_id, created_at DESC, id DESC);
CREATE INDEX refunds_order ON refunds (company_id, order_id) WHERE order_id IS NOT NULL;
-- The payouts a connector has in hand (refunds.Sandbox), oldest first.
CREATE INDEX refunds_payout ON refunds (payout, status, updated_at) WHERE payout <> '';

-- What each refund draws on: an incoming transaction and how much of it.
-- A transaction's refundable amount is its amount_in less its rows of
-- refunds that hold their amount.
CREATE TABLE refund_allocations (
    refund_id      INTEGER NOT NULL REFERENCES refunds (id) ON DELETE CASCADE,
    company_id     INTEGER NOT NULL,
    transaction_id INTEGER NOT NULL,
    amount         INTEGER NOT NULL CHECK (amount > 0),
    PRIMARY KEY (refund_id, transaction_id)
);
CREATE INDEX refund_allocations_transaction ON refund_allocations (company_id, transaction_id);

-- The refund a resolution as "refund" created (sqlstore/exception.go).
ALTER TABLE exception_resolutions ADD COLUMN refund_id INTEGER;

-- +goose Down
ALTER TABLE exception_resolutions DROP COLUMN refund_id;
DROP TABLE refund_allocations;
DROP TABLE refunds;
ALTER TABLE orders DROP COLUMN refunded_amount;
ALTER TABLE companies DROP COLUMN refund_approval_threshold;
