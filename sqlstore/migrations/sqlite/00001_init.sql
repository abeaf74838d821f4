-- Companies, their payment-code formats, users, OAuth2 clients and token
-- sessions. Keep equivalent to ../postgres/00001_init.sql.
--
-- SQLite notes: times are integer Unix microseconds in TIMESTAMP columns (the
-- driver converts them, see sqliteDSN); dates are YYYY-MM-DD text in DATE
-- columns; booleans are 0/1. Tables are not STRICT because STRICT allows only
-- the basic type names, and the driver needs TIMESTAMP/DATE to convert.

-- +goose Up
CREATE TABLE companies (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    full_name         TEXT    NOT NULL,
    short_name        TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    subscription      TEXT    NOT NULL DEFAULT '',
    begin_date        DATE,
    end_date          DATE,
    bank_sub_account  BOOLEAN NOT NULL DEFAULT 0 CHECK (bank_sub_account IN (0, 1)),
    paycode           BOOLEAN NOT NULL DEFAULT 0 CHECK (paycode IN (0, 1)),
    data_storage_days INTEGER NOT NULL DEFAULT 0,
    created_at        TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);

CREATE TABLE payment_code_formats (
    company_id     INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    prefix         TEXT    NOT NULL,
    suffix_from    INTEGER NOT NULL,
    suffix_to      INTEGER NOT NULL,
    character_type TEXT    NOT NULL,
    is_active      BOOLEAN NOT NULL CHECK (is_active IN (0, 1)),
    PRIMARY KEY (company_id, position),
    UNIQUE (company_id, prefix)
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id    INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    email         TEXT    NOT NULL,
    role          TEXT    NOT NULL,
    -- space-separated
    permissions   TEXT    NOT NULL DEFAULT '',
    password_hash TEXT    NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    UNIQUE (company_id, email),
    -- the target of oauth_tokens' reference, which keeps a token's user in the token's company
    UNIQUE (company_id, id)
);

CREATE TABLE oauth_clients (
    id            TEXT    PRIMARY KEY,
    company_id    INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    -- hex SHA-256 of the secret, '' for a public client
    secret_hash   TEXT    NOT NULL DEFAULT '',
    -- space-separated
    scopes        TEXT    NOT NULL DEFAULT '',
    -- newline-separated
    redirect_uris TEXT    NOT NULL DEFAULT '',
    created_at    TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    UNIQUE (company_id, id)
);

CREATE TABLE oauth_tokens (
    kind           TEXT    NOT NULL,
    -- keyed hash of the token; the token itself is never stored
    signature      TEXT    NOT NULL,
    request_id     TEXT    NOT NULL,
    client_id      TEXT    NOT NULL,
    company_id     INTEGER NOT NULL,
    -- NULL for a token with no user (client credentials)
    user_id        INTEGER,
    scopes         TEXT    NOT NULL DEFAULT '',
    granted_scopes TEXT    NOT NULL DEFAULT '',
    data           BLOB    NOT NULL,
    requested_at   TIMESTAMP NOT NULL CHECK (typeof(requested_at) = 'integer'),
    expires_at     TIMESTAMP NOT NULL CHECK (typeof(expires_at) = 'integer'),
    active         BOOLEAN NOT NULL CHECK (active IN (0, 1)),
    PRIMARY KEY (kind, signature),
    FOREIGN KEY (company_id, client_id) REFERENCES oauth_clients (company_id, id) ON DELETE CASCADE,
    FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE
);

CREATE INDEX oauth_tokens_request_id ON oauth_tokens (kind, request_id);
CREATE INDEX oauth_tokens_expires_at ON oauth_tokens (expires_at);

-- +goose Down
DROP TABLE oauth_tokens;
DROP TABLE oauth_clients;
DROP TABLE users;
DROP TABLE payment_code_formats;
DROP TABLE companies;
