-- Secrets the server generates once and every process on the database
-- shares (token signing keys). Keep equivalent to ../sqlite/00002_server_keys.sql.

-- +goose Up
CREATE TABLE server_keys (
    name       text        PRIMARY KEY,
    key        bytea       NOT NULL,
    created_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE server_keys;
