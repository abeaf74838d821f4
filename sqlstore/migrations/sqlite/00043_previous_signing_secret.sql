-- Signing-secret rotation (docs/design.md, D7, "Standard Webhooks."): the
-- signing secret a rotation replaced keeps signing, beside the new one, until
-- previous_signing_until (24 hours after the rotation), so receivers can move
-- to the new secret without losing a notification. previous_signing_secret
-- is sealed like signing_secret (sqlstore/secret.go), bound to its own
-- column; both are NULL when there is none. Keep equivalent to
-- ../postgres/00043_previous_signing_secret.sql.

-- +goose Up
ALTER TABLE delivery_targets ADD COLUMN previous_signing_secret BLOB;
ALTER TABLE delivery_targets ADD COLUMN previous_signing_until TIMESTAMP;

-- +goose Down
ALTER TABLE delivery_targets DROP COLUMN previous_signing_until;
ALTER TABLE delivery_targets DROP COLUMN previous_signing_secret;
