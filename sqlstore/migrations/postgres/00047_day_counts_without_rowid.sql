-- The SQLite twin (../sqlite/00047_day_counts_without_rowid.sql) stores
-- transaction_day_counts in its primary key's B-tree. PostgreSQL has no
-- such table kind; its table is unchanged, and the version is kept so that
-- both engines number their migrations alike.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
