-- Secrets the server generates once and every process on the database
-- shares (token signing keys). Keep equivalent to ../postgres/00002_server_keys.sql.

-- +goose Up
CREATE TABLE server_keys (
    name       TEXT      PRIMARY KEY,
    key        BLOB      NOT NULL,
    created_at TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);

-- +goose Down
DROP TABLE server_keys;
