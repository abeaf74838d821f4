-- Electronic invoices (docs/invoices.md; sqlstore/invoice.go): the
-- invoices, their numbering counters, and the queue of paid orders an
-- automatic invoice may be due for. Keep equivalent to
-- ../postgres/00029_invoices.sql.

-- +goose Up
-- One row per invoice of a tenant. reference_code and tracking_code are
-- xids in UUID form (recon.NewXIDFrom); lookup_code is the buyer's random
-- code for the public lookup page, unique over every tenant. number is 0
-- until issue assigns one (docs/invoices.md, Numbering); year is the year
-- of its series it was numbered in. seller, buyer, items and totals are
-- JSON text (recon.Seller, recon.Buyer, []recon.InvoiceItem,
-- recon.InvoiceTotals). order_id has no foreign key, as refunds.order_id.
-- original_id is the invoice this one replaces (relation 1) or adjusts
-- (relation 2). provider: the provider that took it ('' none yet).
-- auto: made by auto_invoice from order_id (at most one per order).
CREATE TABLE invoices (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    reference_code  TEXT   NOT NULL,
    tracking_code   TEXT   NOT NULL,
    template        TEXT   NOT NULL,
    series          TEXT   NOT NULL,
    number          INTEGER NOT NULL DEFAULT 0,
    year            INTEGER NOT NULL DEFAULT 0,
    issued_date     TIMESTAMP,
    currency        TEXT   NOT NULL,
    exchange_rate   TEXT   NOT NULL,
    payment_method  TEXT   NOT NULL,
    seller          TEXT   NOT NULL,
    buyer           TEXT   NOT NULL,
    items           TEXT   NOT NULL,
    totals          TEXT   NOT NULL,
    order_id        INTEGER,
    auto            BOOLEAN NOT NULL DEFAULT 0 CHECK (auto IN (0, 1)),
    status          TEXT   NOT NULL,
    failure_reason  TEXT   NOT NULL DEFAULT '',
    cqt_code        TEXT   NOT NULL DEFAULT '',
    lookup_code     TEXT   NOT NULL UNIQUE,
    original_id     INTEGER REFERENCES invoices (id),
    relation        INTEGER NOT NULL DEFAULT 0,
    adjustment_type TEXT   NOT NULL DEFAULT '',
    cancel_reason   TEXT   NOT NULL DEFAULT '',
    provider        TEXT   NOT NULL DEFAULT '',
    signed_xml      BLOB,
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    updated_at      TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    UNIQUE (company_id, reference_code),
    UNIQUE (company_id, tracking_code)
);
-- The listing, newest first, and its order filter.
CREATE INDEX invoices_list ON invoices (company_id, created_at DESC, id DESC);
CREATE INDEX invoices_order ON invoices (company_id, order_id) WHERE order_id IS NOT NULL;
-- The last guard of numbering: a number is never used twice.
CREATE UNIQUE INDEX invoices_number ON invoices (company_id, template, series, year, number) WHERE number > 0;
-- auto_invoice makes at most one invoice per order.
CREATE UNIQUE INDEX invoices_auto ON invoices (company_id, order_id) WHERE auto;
-- The invoices waiting for their provider's answer, oldest first.
CREATE INDEX invoices_pending ON invoices (status, updated_at) WHERE status = 'pending';

-- The numbering counters (docs/invoices.md, Numbering): the last number
-- used per tenant, template, series and year. Issue takes the row's lock
-- (UPDATE ... RETURNING) inside the issuing transaction.
CREATE TABLE invoice_counters (
    company_id INTEGER  NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    template   TEXT    NOT NULL,
    series     TEXT    NOT NULL,
    year       INTEGER NOT NULL,
    last_number INTEGER  NOT NULL,
    PRIMARY KEY (company_id, template, series, year)
);

-- Orders that became paid, queued by the payment's transaction for the
-- auto_invoice step, which takes each once (docs/invoices.md, From the
-- order).
CREATE TABLE invoice_order_queue (
    order_id   INTEGER NOT NULL PRIMARY KEY,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    queued_at  TIMESTAMP NOT NULL CHECK (typeof(queued_at) = 'integer')
);
CREATE INDEX invoice_order_queue_due ON invoice_order_queue (queued_at, order_id);

-- +goose Down
DROP TABLE invoice_order_queue;
DROP TABLE invoice_counters;
DROP TABLE invoices;
