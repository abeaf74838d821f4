-- The other references of a transaction (docs/statements.md, References):
-- a statement carries several for one transfer (camt.053's NtryRef,
-- AcctSvcrRef, EndToEndId, TxId, InstrId; MT940's customer and bank
-- references and the :86: subfields; a CSV's other_references), while
-- transactions.reference_number keeps the one that is the idempotency key.
-- They are compared when looking for possible duplicates.
-- Only a transaction that carries other references has rows here (a bank
-- feed's push has none), so the push path writes nothing more. The primary
-- key serves reading a transaction's references and the cascade of
-- retention's deletes; the second index finds the transactions of an
-- account carrying a reference.
-- Keep equivalent to ../postgres/00042_transaction_refs.sql.

-- +goose Up
CREATE TABLE transaction_refs (
    transaction_id  INTEGER NOT NULL REFERENCES transactions (id) ON DELETE CASCADE,
    ref             TEXT    NOT NULL,
    company_id      INTEGER NOT NULL,
    bank_account_id INTEGER NOT NULL,
    PRIMARY KEY (transaction_id, ref)
);
CREATE INDEX transaction_refs_account_ref ON transaction_refs (company_id, bank_account_id, ref);

-- +goose Down
DROP TABLE transaction_refs;
