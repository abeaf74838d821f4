-- A bank account's saved column mapping for statement exports whose layout
-- Recon does not recognise by itself (docs/statements.md, Column mappings):
-- which header holds the date, the amounts, the memo, the reference, the
-- balance. mapping is the JSON of recon.StatementMapping, checked by the
-- statement package before it is stored. One per bank account, removed with
-- it. Keep equivalent to ../postgres/00031_statement_mappings.sql.

-- +goose Up
CREATE TABLE statement_mappings (
    company_id      INTEGER   NOT NULL,
    bank_account_id INTEGER   NOT NULL,
    mapping         TEXT      NOT NULL,
    updated_at      TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer'),
    PRIMARY KEY (company_id, bank_account_id),
    FOREIGN KEY (company_id, bank_account_id) REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE statement_mappings;
