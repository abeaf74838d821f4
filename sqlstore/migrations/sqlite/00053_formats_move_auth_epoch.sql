-- A change of a company's payment-code formats moves the authentication
-- epoch (migration 00012), as a change of its company row already does.
-- The epoch then also covers everything a push's extraction reads
-- (recon.CompanyExtractor: the company's paycode switch and its formats),
-- so the server keeps each tenant's extractor while the epoch that every
-- request reads with its authentication stays put, instead of reading the
-- company at each push (recon.Extractors; docs/design.md, "Extractors kept
-- under the authentication epoch"). Row triggers, as in 00012. Keep
-- equivalent to ../postgres/00053_formats_move_auth_epoch.sql.

-- +goose Up
-- +goose StatementBegin
CREATE TRIGGER payment_code_formats_auth_epoch_insert AFTER INSERT ON payment_code_formats
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER payment_code_formats_auth_epoch_update AFTER UPDATE ON payment_code_formats
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER payment_code_formats_auth_epoch_delete AFTER DELETE ON payment_code_formats
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER payment_code_formats_auth_epoch_delete;
DROP TRIGGER payment_code_formats_auth_epoch_update;
DROP TRIGGER payment_code_formats_auth_epoch_insert;
