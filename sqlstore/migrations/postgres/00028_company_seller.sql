-- The seller of the company's e-invoices (docs/invoices.md, The seller): its
-- legal details as invoices name them, its default invoice template and
-- series, and auto_invoice (issue the invoice of each order that becomes
-- paid). Settings of the company, shared by its modes: a test tenant reads
-- its company's (sqlstore/company.go). Empty text is "not set yet".
-- Keep equivalent to ../sqlite/00028_company_seller.sql.

-- +goose Up
ALTER TABLE companies ADD COLUMN seller_legal_name text NOT NULL DEFAULT '';
-- 10 digits, or 10 digits, a dash and 3 for a branch (recon.NormalizeTaxCode).
ALTER TABLE companies ADD COLUMN seller_tax_code text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN seller_address text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN seller_phone text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN seller_email text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN seller_bank_name text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN seller_bank_account text NOT NULL DEFAULT '';
-- '1' VAT invoice, '2' sales invoice.
ALTER TABLE companies ADD COLUMN invoice_template text NOT NULL DEFAULT '1';
-- e.g. C26TAA; '' none yet.
ALTER TABLE companies ADD COLUMN invoice_series text NOT NULL DEFAULT '';
ALTER TABLE companies ADD COLUMN auto_invoice boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE companies DROP COLUMN auto_invoice;
ALTER TABLE companies DROP COLUMN invoice_series;
ALTER TABLE companies DROP COLUMN invoice_template;
ALTER TABLE companies DROP COLUMN seller_bank_account;
ALTER TABLE companies DROP COLUMN seller_bank_name;
ALTER TABLE companies DROP COLUMN seller_email;
ALTER TABLE companies DROP COLUMN seller_phone;
ALTER TABLE companies DROP COLUMN seller_address;
ALTER TABLE companies DROP COLUMN seller_tax_code;
ALTER TABLE companies DROP COLUMN seller_legal_name;
