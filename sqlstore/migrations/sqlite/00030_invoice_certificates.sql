-- The certificate each tenant signs its e-invoices' XML with
-- (docs/invoices.md, XML and its signature): the merchant's, uploaded as
-- PKCS#12 (recon invoices certificate upload), or the sandbox's self-signed
-- one. The private key is sealed like every secret (sqlstore/secret.go),
-- bound to this table, its column and the row's company_id (the tenant's:
-- a test tenant has its own). Keep equivalent to
-- ../postgres/00030_invoice_certificates.sql.

-- +goose Up
CREATE TABLE invoice_certificates (
    company_id    INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    private_key   BLOB    NOT NULL, -- PKCS#8 PEM, sealed
    certificates  TEXT    NOT NULL, -- PEM: the signing certificate, then its chain
    subject       TEXT    NOT NULL,
    serial_number TEXT    NOT NULL,
    not_before    TIMESTAMP NOT NULL CHECK (typeof(not_before) = 'integer'),
    not_after     TIMESTAMP NOT NULL CHECK (typeof(not_after) = 'integer'),
    self_signed   BOOLEAN NOT NULL CHECK (self_signed IN (0, 1)),
    created_at    TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer')
);

-- +goose Down
DROP TABLE invoice_certificates;
