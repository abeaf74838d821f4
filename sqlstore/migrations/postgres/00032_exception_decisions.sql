-- Exceptions an accountant can close (issue 22): every decision a person
-- makes about an exception is kept, not only the one that closes it. An ask
-- for an underpaid order's remainder (a new virtual account) is a decision
-- that leaves the exception open, and a later write-off or ignore closes it;
-- both stay in the history (docs/api.md, Exceptions queue). So the one row
-- per transaction of 00011 becomes one closing row per transaction (a
-- partial unique index, still the last guard against closing twice), and a
-- row says whether it closes, what it wrote off or asked for (amount) and
-- the virtual account it asked through. Keep equivalent to
-- ../sqlite/00032_exception_decisions.sql.

-- +goose Up
ALTER TABLE exception_resolutions
    ADD COLUMN amount bigint NOT NULL DEFAULT 0,
    ADD COLUMN va_number text NOT NULL DEFAULT '',
    ADD COLUMN closes boolean NOT NULL DEFAULT true;
ALTER TABLE exception_resolutions DROP CONSTRAINT exception_resolutions_transaction_id_company_id_key;
CREATE UNIQUE INDEX exception_resolutions_closing ON exception_resolutions (transaction_id, company_id) WHERE closes;
CREATE INDEX exception_resolutions_history ON exception_resolutions (transaction_id, company_id, id);

-- +goose Down
DELETE FROM exception_resolutions WHERE NOT closes;
DROP INDEX exception_resolutions_history;
DROP INDEX exception_resolutions_closing;
ALTER TABLE exception_resolutions ADD CONSTRAINT exception_resolutions_transaction_id_company_id_key UNIQUE (transaction_id, company_id);
ALTER TABLE exception_resolutions DROP COLUMN closes, DROP COLUMN va_number, DROP COLUMN amount;
