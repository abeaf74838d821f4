-- The statements imported into a bank account and what each of their entries
-- became, for the balance proof (docs/statements.md, Balance proof):
-- statement_imports holds one row per imported file (its period, the
-- statement's opening and closing balances when it gave them, NULL when not,
-- its entry count and sums in and out, exact integer VND); a file imported
-- again into the same account (the same bytes: file_sha256) keeps its first
-- row. statement_import_entries maps each entry of the file, in file order
-- (seq), to the transaction it became (is_new) or was recognised as, with the
-- entry's own signed amount (in minus out); an entry skipped as invalid has
-- no transaction, no amount and its problem in note. A transaction deleted
-- later (retention) leaves its entry without one. The import, its row and
-- its entries commit in one database transaction.
-- The entries' table is WITHOUT ROWID here (SQLite): its primary key is
-- the table, one B-tree fewer written per entry.
-- Keep equivalent to ../postgres/00045_statement_imports.sql.

-- +goose Up
CREATE TABLE statement_imports (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER   NOT NULL,
    bank_account_id INTEGER   NOT NULL,
    format          TEXT      NOT NULL,
    file_name       TEXT      NOT NULL,
    file_sha256     TEXT,
    period_from     TEXT      NOT NULL,
    period_to       TEXT      NOT NULL,
    opening         INTEGER,
    closing         INTEGER,
    entries         INTEGER   NOT NULL,
    sum_in          INTEGER   NOT NULL,
    sum_out         INTEGER   NOT NULL,
    imported        INTEGER   NOT NULL,
    duplicates      INTEGER   NOT NULL,
    skipped         INTEGER   NOT NULL,
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    FOREIGN KEY (company_id, bank_account_id) REFERENCES bank_accounts (company_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX statement_imports_file ON statement_imports (company_id, bank_account_id, file_sha256);
CREATE INDEX statement_imports_account_period ON statement_imports (company_id, bank_account_id, period_to, id);

CREATE TABLE statement_import_entries (
    import_id      INTEGER NOT NULL REFERENCES statement_imports (id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    file_row       INTEGER NOT NULL,
    transaction_id INTEGER REFERENCES transactions (id) ON DELETE SET NULL,
    is_new         BOOLEAN NOT NULL CHECK (is_new IN (0, 1)),
    amount         INTEGER,
    note           TEXT,
    PRIMARY KEY (import_id, seq)
) WITHOUT ROWID;
CREATE INDEX statement_import_entries_transaction ON statement_import_entries (transaction_id, import_id);

-- +goose Down
DROP TABLE statement_import_entries;
DROP TABLE statement_imports;
