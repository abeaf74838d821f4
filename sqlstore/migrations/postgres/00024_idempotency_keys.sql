-- API v2's idempotency keys (docs/api-v2.md, Idempotency). A POST carrying
-- X-Idempotency-Key claims the key by inserting its row: the primary key
-- (tenant, key) lets exactly one request of any node claim it, and the row
-- outlives restarts. state running holds the claim until lease_until (a
-- crashed node's claim is taken over after it); done holds the answer
-- (status, body) that a repeat with the same route and body_hash (SHA-256
-- of the canonical JSON body) gets again. expires_at is 24 h after the
-- request, or NULL for a key that lives as long as the resource it made (a
-- refund's); the maintenance loop deletes the expired ones. Keep equivalent
-- to ../sqlite/00024_idempotency_keys.sql.

-- +goose Up
CREATE TABLE idempotency_keys (
    company_id  bigint      NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    key         text        NOT NULL,
    route       text        NOT NULL,
    body_hash   text        NOT NULL,
    state       text        NOT NULL CHECK (state IN ('running', 'done')),
    claim       text        NOT NULL,
    lease_until timestamptz NOT NULL,
    status      integer     NOT NULL DEFAULT 0,
    answer      bytea,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz,
    PRIMARY KEY (company_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
