-- Running balances in the bank's order (issue 18, item 13): a transaction's
-- accumulated is derived in (transaction_date, id) order, not in arrival
-- order (ARCHITECTURE.md, How a transaction arrives; docs/api.md,
-- Balances).
--
--   transactions.bank_balance      the balance the bank gave with the row
--                                  (feed, camt.053, MT940, a CSV column), NULL
--                                  when it gave none; such a row's accumulated
--                                  is the bank's, and a row that arrives before
--                                  it re-derives the rows up to it only.
--   bank_accounts.last_date        the latest transaction_date of the account:
--                                  a batch dated on or after it is appended
--                                  without reading any row.
--   bank_accounts.opening_balance  the balance before the account's earliest
--   bank_accounts.opening_known    stored row: 0 and unknown until retention
--                                  deletes older rows and keeps their balance.
--   bank_accounts.known_from_date  the first row in bank order that carried
--   bank_accounts.known_from_id    the bank's balance: balances from it on
--                                  are known, and only a known balance can
--                                  disagree with the bank's (a discontinuity).
--
-- Rows stored before this migration keep their accumulated. Their bank
-- balance is known only where a discontinuity recorded it (its reported,
-- which is the row's accumulated); elsewhere it is NULL, and a
-- re-derivation treats the row as derived. An account's balances were all
-- known once it had a row: its first row is where they are known from.
-- Keep equivalent to ../postgres/00022_bank_order.sql.

-- +goose Up
ALTER TABLE transactions ADD COLUMN bank_balance INTEGER;
ALTER TABLE bank_accounts ADD COLUMN last_date TIMESTAMP CHECK (last_date IS NULL OR typeof(last_date) = 'integer');
ALTER TABLE bank_accounts ADD COLUMN opening_balance INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bank_accounts ADD COLUMN opening_known BOOLEAN NOT NULL DEFAULT 0 CHECK (opening_known IN (0, 1));
ALTER TABLE bank_accounts ADD COLUMN known_from_date TIMESTAMP CHECK (known_from_date IS NULL OR typeof(known_from_date) = 'integer');
ALTER TABLE bank_accounts ADD COLUMN known_from_id INTEGER;
UPDATE transactions SET bank_balance = accumulated WHERE id IN (SELECT transaction_id FROM balance_discontinuities);
UPDATE bank_accounts SET last_date = (SELECT MAX(transaction_date) FROM transactions WHERE bank_account_id = bank_accounts.id);
UPDATE bank_accounts SET
    known_from_date = (SELECT transaction_date FROM transactions WHERE bank_account_id = bank_accounts.id ORDER BY transaction_date, id LIMIT 1),
    known_from_id = (SELECT id FROM transactions WHERE bank_account_id = bank_accounts.id ORDER BY transaction_date, id LIMIT 1);

-- +goose Down
ALTER TABLE bank_accounts DROP COLUMN known_from_id;
ALTER TABLE bank_accounts DROP COLUMN known_from_date;
ALTER TABLE bank_accounts DROP COLUMN opening_known;
ALTER TABLE bank_accounts DROP COLUMN opening_balance;
ALTER TABLE bank_accounts DROP COLUMN last_date;
ALTER TABLE transactions DROP COLUMN bank_balance;
