-- The certificate each tenant signs its e-invoices' XML with
-- (docs/invoices.md, XML and its signature): the merchant's, uploaded as
-- PKCS#12 (recon invoices certificate upload), or the sandbox's self-signed
-- one. The private key is sealed like every secret (sqlstore/secret.go),
-- bound to this table, its column and the row's company_id (the tenant's:
-- a test tenant has its own). Keep equivalent to
-- ../sqlite/00030_invoice_certificates.sql.

-- +goose Up
CREATE TABLE invoice_certificates (
    company_id    bigint      PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    private_key   bytea       NOT NULL, -- PKCS#8 PEM, sealed
    certificates  text        NOT NULL, -- PEM: the signing certificate, then its chain
    subject       text        NOT NULL,
    serial_number text        NOT NULL,
    not_before    timestamptz NOT NULL,
    not_after     timestamptz NOT NULL,
    self_signed   boolean     NOT NULL,
    created_at    timestamptz NOT NULL
);

-- +goose Down
DROP TABLE invoice_certificates;
