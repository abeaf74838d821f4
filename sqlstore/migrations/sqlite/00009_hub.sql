-- The bank-linking hub (docs/design.md, D8): the merchant's customers (the hub
-- API's "companies"), link tokens and link sessions, linked bank accounts
-- and the hosted page's branding. Every table is tenant data keyed by the
-- Recon company (company_id); a test tenant is a company of its own, so no
-- table has a mode column. The hub webhook is a delivery_targets row of kind
-- 'webhook' (its allow_events in settings). Keep equivalent to
-- ../postgres/00009_hub.sql.

-- +goose Up
CREATE TABLE hub_customers (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    xid        TEXT    NOT NULL UNIQUE,
    full_name  TEXT    NOT NULL,
    short_name TEXT    NOT NULL DEFAULT '',
    status     TEXT    NOT NULL,
    created_at TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    updated_at TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    UNIQUE (company_id, full_name),
    UNIQUE (company_id, id)
);
CREATE INDEX hub_customers_company_created ON hub_customers (company_id, created_at DESC, id DESC);

-- A linked account is an ordinary bank account of the tenant, tagged with
-- its hub customer, its wire id and its link state (NULL on accounts the hub
-- did not link).
ALTER TABLE bank_accounts ADD COLUMN hub_customer_id INTEGER;
ALTER TABLE bank_accounts ADD COLUMN xid TEXT;
-- linked | unlinked | inactive
ALTER TABLE bank_accounts ADD COLUMN link_state TEXT;
-- individual | enterprise
ALTER TABLE bank_accounts ADD COLUMN account_type TEXT;
ALTER TABLE bank_accounts ADD COLUMN bank_code TEXT;
ALTER TABLE bank_accounts ADD COLUMN linked_at TIMESTAMP;
CREATE UNIQUE INDEX bank_accounts_xid ON bank_accounts (xid) WHERE xid IS NOT NULL;
CREATE INDEX bank_accounts_hub_customer ON bank_accounts (company_id, hub_customer_id) WHERE hub_customer_id IS NOT NULL;

CREATE TABLE hub_link_tokens (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL,
    hub_customer_id INTEGER NOT NULL,
    xid             TEXT    NOT NULL UNIQUE,
    -- hex SHA-256 of the link token; the token itself is never stored
    token_hash      TEXT    NOT NULL UNIQUE,
    purpose         TEXT    NOT NULL,
    -- the account to unlink (purpose UNLINK_BANK_ACCOUNT)
    bank_account_id INTEGER,
    redirect_uri    TEXT    NOT NULL DEFAULT '',
    is_mobile_app   BOOLEAN NOT NULL DEFAULT 0 CHECK (is_mobile_app IN (0, 1)),
    language        TEXT    NOT NULL,
    -- sandbox banks are offered (a test tenant, or a server in sandbox mode)
    sandbox         BOOLEAN NOT NULL CHECK (sandbox IN (0, 1)),
    -- ACTIVE | USED | REVOKED | EXPIRED
    status          TEXT    NOT NULL,
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    expires_at      TIMESTAMP NOT NULL CHECK (typeof(expires_at) = 'integer'),
    ended_at        TIMESTAMP,
    UNIQUE (company_id, id),
    FOREIGN KEY (company_id, hub_customer_id) REFERENCES hub_customers (company_id, id) ON DELETE CASCADE
);
-- The maintenance loop's expiry scan reads live tokens only.
CREATE INDEX hub_link_tokens_live ON hub_link_tokens (expires_at) WHERE status = 'ACTIVE';

CREATE TABLE hub_link_sessions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL,
    link_token_id   INTEGER NOT NULL,
    xid             TEXT    NOT NULL UNIQUE,
    -- OPEN | COMPLETED | FAILED | ABANDONED | EXPIRED | REVOKED
    status          TEXT    NOT NULL,
    -- the step shown: INITIALIZED, REQUEST_BANK_ACCOUNT_LINK, ...
    state           TEXT    NOT NULL,
    bank_code       TEXT    NOT NULL DEFAULT '',
    account_type    TEXT    NOT NULL DEFAULT '',
    account_number  TEXT    NOT NULL DEFAULT '',
    holder_name     TEXT    NOT NULL DEFAULT '',
    -- the bank's reference of the OTP it sent
    request_ref     TEXT    NOT NULL DEFAULT '',
    otp_attempts    INTEGER NOT NULL DEFAULT 0,
    bank_account_id INTEGER,
    reason          TEXT    NOT NULL DEFAULT '',
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    last_step_at    TIMESTAMP NOT NULL CHECK (typeof(last_step_at) = 'integer'),
    ended_at        TIMESTAMP,
    FOREIGN KEY (company_id, link_token_id) REFERENCES hub_link_tokens (company_id, id) ON DELETE CASCADE
);
CREATE INDEX hub_link_sessions_token ON hub_link_sessions (link_token_id, id);
-- The abandonment scan reads open sessions only.
CREATE INDEX hub_link_sessions_open ON hub_link_sessions (last_step_at) WHERE status = 'OPEN';

-- Branding of the hosted link page (GET/POST /v1/merchant-config).
CREATE TABLE hub_merchant_configs (
    company_id      INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    display_name    TEXT    NOT NULL DEFAULT '',
    primary_color   TEXT    NOT NULL DEFAULT '',
    secondary_color TEXT    NOT NULL DEFAULT '',
    logo_url        TEXT    NOT NULL DEFAULT '',
    updated_at      TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer')
);

-- +goose Down
DROP TABLE hub_merchant_configs;
DROP TABLE hub_link_sessions;
DROP TABLE hub_link_tokens;
DROP INDEX bank_accounts_hub_customer;
DROP INDEX bank_accounts_xid;
ALTER TABLE bank_accounts DROP COLUMN linked_at;
ALTER TABLE bank_accounts DROP COLUMN bank_code;
ALTER TABLE bank_accounts DROP COLUMN account_type;
ALTER TABLE bank_accounts DROP COLUMN link_state;
ALTER TABLE bank_accounts DROP COLUMN xid;
ALTER TABLE bank_accounts DROP COLUMN hub_customer_id;
DROP TABLE hub_customers;
