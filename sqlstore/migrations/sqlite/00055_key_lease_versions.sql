-- The PostgreSQL twin (../postgres/00055_key_lease_versions.sql) lets the key
-- lease's holder keep a tenant's change version from its own writes. SQLite
-- has no lease. The version is kept so that both engines number their
-- migrations alike.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
