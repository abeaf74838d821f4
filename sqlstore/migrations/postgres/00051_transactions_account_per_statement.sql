-- A transaction belongs to an account of its own company: checked once per
-- statement instead of once per row. The foreign key of 00003 ran, through
-- the trigger machinery, a SELECT ... FOR KEY SHARE of the account for
-- every inserted row: without it the ingestion ran 1.5 times as fast
-- (docs/benchmarks.md, "PostgreSQL: the account checked once per
-- statement"). The rule and its behaviour are the foreign key's:
--   - an INSERT into transactions locks the accounts its rows name (FOR KEY
--     SHARE, as the key did: an account's deletion waits for the inserting
--     transaction, then deletes its rows) and fails with SQLSTATE 23503
--     (foreign_key_violation) when a row's account is not in its company;
--   - deleting an account deletes its transactions (ON DELETE CASCADE), also
--     when a company's deletion cascades to its accounts;
--   - a transaction never changes account or company (no writer does; the
--     key would have checked it, this refuses it).
-- It assumes READ COMMITTED, which the store sets on each connection: each
-- statement of a trigger sees what committed before it (docs/design.md, "The
-- account rule once per statement").
-- The SQLite twin (../sqlite/00051_transactions_account_per_statement.sql)
-- keeps the foreign key: there the check is an in-process B-tree lookup.

-- +goose Up
ALTER TABLE transactions DROP CONSTRAINT transactions_company_id_bank_account_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION transactions_account_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM bank_accounts b
        WHERE (b.company_id, b.id) IN (SELECT DISTINCT company_id, bank_account_id FROM added)
        ORDER BY b.id FOR KEY SHARE OF b;
    IF EXISTS (SELECT 1 FROM (SELECT DISTINCT company_id, bank_account_id FROM added) a
               WHERE NOT EXISTS (SELECT 1 FROM bank_accounts b WHERE b.id = a.bank_account_id AND b.company_id = a.company_id)) THEN
        RAISE EXCEPTION 'a transaction''s bank account is not in its company'
            USING ERRCODE = 'foreign_key_violation', TABLE = 'transactions', CONSTRAINT = 'transactions_account_check';
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER transactions_account_check AFTER INSERT ON transactions
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION transactions_account_check();

-- +goose StatementBegin
CREATE FUNCTION transactions_account_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a transaction never changes bank account or company'
        USING ERRCODE = 'foreign_key_violation', TABLE = 'transactions', CONSTRAINT = 'transactions_account_check';
END $$;
-- +goose StatementEnd
CREATE TRIGGER transactions_account_fixed BEFORE UPDATE OF company_id, bank_account_id ON transactions
    FOR EACH ROW WHEN (OLD.company_id IS DISTINCT FROM NEW.company_id OR OLD.bank_account_id IS DISTINCT FROM NEW.bank_account_id)
    EXECUTE FUNCTION transactions_account_fixed();

-- +goose StatementBegin
CREATE FUNCTION bank_accounts_delete_transactions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM transactions WHERE bank_account_id = OLD.id AND company_id = OLD.company_id;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER bank_accounts_delete_transactions AFTER DELETE ON bank_accounts
    FOR EACH ROW EXECUTE FUNCTION bank_accounts_delete_transactions();

-- +goose Down
DROP TRIGGER bank_accounts_delete_transactions ON bank_accounts;
DROP FUNCTION bank_accounts_delete_transactions();
DROP TRIGGER transactions_account_fixed ON transactions;
DROP FUNCTION transactions_account_fixed();
DROP TRIGGER transactions_account_check ON transactions;
DROP FUNCTION transactions_account_check();
ALTER TABLE transactions ADD FOREIGN KEY (company_id, bank_account_id) REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE;
