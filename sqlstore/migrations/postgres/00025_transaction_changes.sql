-- The change log of GET /v2/transactions/sync (docs/api-v2.md, Transactions
-- sync): one row per change of a tenant's transactions (added: ingested;
-- modified: its code or match state changed; removed: deleted by
-- retention), stamped with seq, the tenant's change counter.
--
-- Why a counter row and not an identity: an identity is drawn at INSERT,
-- not at COMMIT, so a writer that commits late leaves a lower id behind a
-- reader that already passed it. The counter is sync_counters.seq, moved
-- (an upsert that locks the tenant's row) as the LAST statement of every
-- writing transaction, after its other locks (sqlstore/sync.go): the next
-- writer of the tenant waits for the commit to read the counter, so per
-- tenant the stamps follow the commit order and a reader that saw seq n
-- has seen every change up to n. floor is the last seq purged: a cursor
-- below it has missed changes (409 cursor_expired). Keep equivalent to
-- ../sqlite/00025_transaction_changes.sql.

-- +goose Up
CREATE TABLE sync_counters (
    company_id bigint PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    floor      bigint NOT NULL DEFAULT 0
);

-- No foreign key to transactions: a removed transaction keeps its changes.
CREATE TABLE transaction_changes (
    company_id     bigint      NOT NULL,
    seq            bigint      NOT NULL,
    transaction_id bigint      NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('added', 'modified', 'removed')),
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (company_id, seq)
);

-- +goose Down
DROP TABLE transaction_changes;
DROP TABLE sync_counters;
