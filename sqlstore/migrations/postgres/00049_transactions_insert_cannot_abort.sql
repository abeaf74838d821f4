-- The SQLite twin (../sqlite/00049_transactions_insert_cannot_abort.sql)
-- restates the transactions table's foreign key and CHECKs so that its
-- multi-row insert needs no statement journal. PostgreSQL keeps none, and
-- its foreign key stays checked at each statement; the version is kept so
-- that both engines number their migrations alike.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
