-- Test mode (docs/design.md, D10): every company gets, when it first needs one,
-- a twin test tenant: a row of companies whose test_of names the live
-- company. All tenant data is keyed by company_id, so the twin's data (test
-- merchant credentials, bank accounts, transactions, orders, notification settings
-- and deliveries) is separated from the live data by the same predicate
-- that separates companies: no table of tenant data changes, no query pays for
-- the mode. The twin's own name, status and configuration columns are
-- copies made at creation and never read: the store reads them from the
-- live company. Keep equivalent to ../sqlite/00008_test_mode.sql.

-- +goose Up
ALTER TABLE companies ADD COLUMN test_of bigint REFERENCES companies (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX companies_test_of ON companies (test_of) WHERE test_of IS NOT NULL;
-- OAuth2 clients stay with the live company (their tokens name its users),
-- marked test: their tokens reach the test tenant's data.
ALTER TABLE oauth_clients ADD COLUMN test boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE oauth_clients DROP COLUMN test;
DROP INDEX companies_test_of;
ALTER TABLE companies DROP COLUMN test_of;
