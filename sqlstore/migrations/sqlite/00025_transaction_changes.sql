-- The change log of GET /v2/transactions/sync (docs/api-v2.md, Transactions
-- sync): one row per change of a tenant's transactions (added: ingested;
-- modified: its code or match state changed; removed: deleted by
-- retention), stamped with seq, the tenant's change counter, moved as the
-- last statement of every writing transaction so that the stamps follow
-- the commit order (SQLite has one writer at a time anyway; see
-- ../postgres/00025_transaction_changes.sql for why PostgreSQL needs it).
-- floor is the last seq purged: a cursor below it has missed changes (409
-- cursor_expired). Keep equivalent to
-- ../postgres/00025_transaction_changes.sql.

-- +goose Up
CREATE TABLE sync_counters (
    company_id INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    floor      INTEGER NOT NULL DEFAULT 0
);

-- No foreign key to transactions: a removed transaction keeps its changes.
CREATE TABLE transaction_changes (
    company_id     INTEGER   NOT NULL,
    seq            INTEGER   NOT NULL,
    transaction_id INTEGER   NOT NULL,
    kind           TEXT      NOT NULL CHECK (kind IN ('added', 'modified', 'removed')),
    created_at     TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    PRIMARY KEY (company_id, seq)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE transaction_changes;
DROP TABLE sync_counters;
