-- The PostgreSQL twin (../postgres/00054_key_lease.sql) makes the key lease,
-- by which a server node answers the authentication's key read from memory.
-- SQLite needs none: its key read is in-process. The version is kept so that
-- both engines number their migrations alike.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
