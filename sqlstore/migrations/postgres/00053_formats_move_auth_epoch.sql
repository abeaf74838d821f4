-- A change of a company's payment-code formats moves the authentication
-- epoch (migration 00012), as a change of its company row already does.
-- The epoch then also covers everything a push's extraction reads
-- (recon.CompanyExtractor: the company's paycode switch and its formats),
-- so a node keeps each tenant's extractor while the epoch that every
-- request reads with its authentication stays put, instead of reading the
-- company at each push (recon.Extractors; docs/design.md, "Extractors kept
-- under the authentication epoch"). Format changes are an administrator's
-- rare act: the callers they make every node look up again cost nothing
-- that matters. Keep equivalent to ../sqlite/00053_formats_move_auth_epoch.sql.

-- +goose Up
CREATE TRIGGER payment_code_formats_auth_epoch AFTER INSERT OR UPDATE OR DELETE ON payment_code_formats
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();

-- +goose Down
DROP TRIGGER payment_code_formats_auth_epoch ON payment_code_formats;
