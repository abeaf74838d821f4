-- The transactions table's constraints restated so that the multi-row
-- insert of ingestion cannot abort midway, and SQLite then keeps no
-- statement journal for it (docs/design.md, "An insert that cannot abort").
-- A multi-row INSERT inside a transaction that "may abort" copies every
-- page it touches that the transaction had already changed into an
-- in-memory journal, to undo the statement alone: 21% of the insert's CPU
-- under a 200,000-row ingestion (docs/benchmarks.md, "SQLite: the
-- writer's journal and change log"). Three things made it one:
--   - NOT NULL columns, whose default resolution is ABORT: the insert is now
--     INSERT OR FAIL (sqliteInsertTransactions), and any error
--     rolls back the whole transaction anyway;
--   - the foreign key to bank_accounts, checked at each row: it is now
--     DEFERRABLE INITIALLY DEFERRED, checked at COMMIT, which fails and
--     rolls back as before (ON DELETE CASCADE is unchanged);
--   - the CHECKs calling typeof(): any function call in the statement's
--     program may raise an error. They now compare the value with its
--     CAST to INTEGER, which holds for an integer and for nothing else
--     (text, real, blob), as typeof() = 'integer' did.
--
-- Neither change alters what is stored, so the table's definition is
-- edited in place as SQLite documents for such changes ("Making Other
-- Kinds Of Table Schema Changes" in its ALTER TABLE page), not rebuilt: no
-- copy of the rows. The throwaway table moves the schema cookie, so that
-- every other connection reads the new definition; RESET has this one
-- read it. PostgreSQL keeps no statement journal: its twin changes
-- nothing (../postgres/00049_transactions_insert_cannot_abort.sql).

-- +goose Up
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(replace(replace(sql,
    'CHECK (typeof(transaction_date) = ''integer'')', 'CHECK (transaction_date = CAST(transaction_date AS INTEGER))'),
    'CHECK (typeof(created_at) = ''integer'')', 'CHECK (created_at = CAST(created_at AS INTEGER))'),
    'REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE', 'REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED')
WHERE type = 'table' AND name = 'transactions';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie (moved INTEGER);
DROP TABLE schema_cookie;

-- +goose Down
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(replace(replace(sql,
    'CHECK (transaction_date = CAST(transaction_date AS INTEGER))', 'CHECK (typeof(transaction_date) = ''integer'')'),
    'CHECK (created_at = CAST(created_at AS INTEGER))', 'CHECK (typeof(created_at) = ''integer'')'),
    'ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED', 'ON DELETE CASCADE')
WHERE type = 'table' AND name = 'transactions';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie (moved INTEGER);
DROP TABLE schema_cookie;
