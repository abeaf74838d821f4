-- The PostgreSQL twin (../postgres/00051_transactions_account_per_statement.sql)
-- replaces the transactions table's foreign key to bank_accounts by a check
-- once per statement, with the same behaviour. SQLite keeps its foreign key:
-- there the check is an in-process B-tree lookup. The version is kept so
-- that both engines number their migrations alike.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
