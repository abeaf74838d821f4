-- The look-up of possible duplicates (sqlstore/duplicates.go, findDuplicates)
-- probes transactions_dup_key for each key it asks of an account. With the
-- index on (bank_account_id, dup_key), PostgreSQL's planner could read it by
-- the account alone and filter on the keys, and did whenever its statistics
-- predated the account (a new account in a large table is taken for one
-- row until the next analyse): every row of the account read for each push,
-- 2.8 ms a call at 1,000,000 rows (docs/benchmarks.md, "The duplicate
-- look-up keyed by account"). The index is now on one expression, the key
-- plus the account, which the look-up asks for; its account condition is
-- written so that no index serves it (+bank_account_id), so the probes are
-- the only way in. Two pairs with the same sum are told apart by the
-- look-up's filter.
-- Keep equivalent to ../postgres/00052_dup_key_with_account.sql.

-- +goose Up
DROP INDEX transactions_dup_key;
CREATE INDEX transactions_dup_key ON transactions ((dup_key + bank_account_id));

-- +goose Down
DROP INDEX transactions_dup_key;
CREATE INDEX transactions_dup_key ON transactions (bank_account_id, dup_key);
