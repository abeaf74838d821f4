-- Payment gateway: merchants, IPN targets, orders, match decisions, and the
-- delivery outbox shared by IPN and hub webhooks. Keep equivalent to
-- ../postgres/00004_gateway.sql.

-- +goose Up
CREATE TABLE merchants (
    company_id  INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    merchant_id TEXT    NOT NULL UNIQUE,
    -- AES-256-GCM sealed with the server key "data" (see sqlstore/secret.go)
    secret_key  BLOB    NOT NULL,
    created_at  TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);

-- Where a company's deliveries of one kind go (kind 'ipn' or 'webhook').
CREATE TABLE delivery_targets (
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind       TEXT    NOT NULL,
    url        TEXT    NOT NULL,
    auth_type  TEXT    NOT NULL,
    secret     BLOB    NOT NULL, -- sealed like merchants.secret_key
    active     BOOLEAN NOT NULL CHECK (active IN (0, 1)),
    -- the hub webhook's settings (request_content_type, allow_events), as JSON
    settings   TEXT    NOT NULL DEFAULT '{}',
    updated_at TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    PRIMARY KEY (company_id, kind)
);

CREATE TABLE orders (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id          INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    invoice_number      TEXT    NOT NULL,
    order_ref           TEXT    NOT NULL DEFAULT '',
    customer_id         TEXT    NOT NULL DEFAULT '',
    status              TEXT    NOT NULL,
    amount              INTEGER NOT NULL,
    currency            TEXT    NOT NULL,
    description         TEXT    NOT NULL DEFAULT '',
    payment_code        TEXT    NOT NULL,
    virtual_account     TEXT,
    bank_account_id     INTEGER,
    paid_amount         INTEGER NOT NULL DEFAULT 0,
    custom_data         TEXT    NOT NULL DEFAULT '[]',
    user_agent          TEXT    NOT NULL DEFAULT '',
    ip_address          TEXT    NOT NULL DEFAULT '',
    success_url         TEXT    NOT NULL DEFAULT '',
    error_url           TEXT    NOT NULL DEFAULT '',
    cancel_url          TEXT    NOT NULL DEFAULT '',
    payment_method      TEXT    NOT NULL DEFAULT 'BANK_TRANSFER',
    created_at          TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    updated_at          TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    paid_at             TIMESTAMP,
    paid_transaction_id INTEGER,
    cancelled_at        TIMESTAMP,
    voided_at           TIMESTAMP,
    UNIQUE (company_id, invoice_number),
    UNIQUE (company_id, payment_code)
);
CREATE UNIQUE INDEX orders_virtual_account ON orders (company_id, virtual_account) WHERE virtual_account IS NOT NULL;
CREATE INDEX orders_company_created ON orders (company_id, created_at DESC, id DESC);

CREATE TABLE match_decisions (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id     INTEGER NOT NULL,
    transaction_id INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    order_id       INTEGER REFERENCES orders (id) ON DELETE CASCADE,
    outcome        TEXT    NOT NULL,
    rule           TEXT    NOT NULL DEFAULT '',
    code           TEXT    NOT NULL DEFAULT '',
    amount         INTEGER NOT NULL,
    order_amount   INTEGER NOT NULL DEFAULT 0,
    paid_total     INTEGER NOT NULL DEFAULT 0,
    reason         TEXT    NOT NULL,
    created_at     TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);
CREATE INDEX match_decisions_transaction ON match_decisions (transaction_id);
CREATE INDEX match_decisions_order ON match_decisions (order_id);
CREATE INDEX match_decisions_company ON match_decisions (company_id, outcome, created_at);

-- The durable outbox. A row is written in the same database transaction as
-- the state change that causes it.
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind            TEXT    NOT NULL,
    event           TEXT    NOT NULL,
    payload         BLOB    NOT NULL,
    status          TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMP NOT NULL,
    lease_until     TIMESTAMP,
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL,
    delivered_at    TIMESTAMP
);
-- The dispatcher's claim: due pending rows in order.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_company ON deliveries (company_id, id DESC);
-- The outbox gauges count pending and dead rows, and the retention job deletes
-- old delivered ones: each through its own partial index, never a table scan.
CREATE INDEX deliveries_dead ON deliveries (id) WHERE status = 'dead';
CREATE INDEX deliveries_delivered ON deliveries (delivered_at) WHERE status = 'delivered';

CREATE TABLE delivery_attempts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    at          TIMESTAMP NOT NULL,
    url         TEXT    NOT NULL,
    status_code INTEGER NOT NULL,
    latency_us  INTEGER NOT NULL,
    response    TEXT    NOT NULL DEFAULT '',
    error       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, id);

-- +goose Down
DROP TABLE delivery_attempts;
DROP TABLE deliveries;
DROP TABLE match_decisions;
DROP TABLE orders;
DROP TABLE delivery_targets;
DROP TABLE merchants;
