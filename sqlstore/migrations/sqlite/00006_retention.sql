-- Indexes for each company's data retention (sqlstore/retention.go). Keep
-- equivalent to ../postgres/00006_retention.sql.

-- +goose Up
-- Deleting a transaction cascades to its discontinuities: without this index
-- every deleted row would scan the whole table.
CREATE INDEX balance_discontinuities_transaction ON balance_discontinuities (transaction_id);
-- A company's finished deliveries older than its retention, found without
-- reading its newer ones.
CREATE INDEX deliveries_company_created ON deliveries (company_id, created_at);

-- +goose Down
DROP INDEX deliveries_company_created;
DROP INDEX balance_discontinuities_transaction;
