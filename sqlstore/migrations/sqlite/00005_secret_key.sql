-- The key that seals secrets moves out of the database (docs/design.md, D9):
-- secret_key_state names the key new secrets are sealed under and holds a
-- fingerprint of it (an HMAC under the key itself, which reveals nothing of
-- it), so that a server started with the wrong key file stops at once.
-- Every target gets its own signing secret (sealed; NULL until the store
-- makes one, see sqlstore/secretkey.go). Keep equivalent to
-- ../postgres/00005_secret_key.sql.

-- +goose Up
CREATE TABLE secret_key_state (
    id          INTEGER   PRIMARY KEY CHECK (id = 1),
    key_id      INTEGER   NOT NULL,
    fingerprint TEXT      NOT NULL,
    updated_at  TIMESTAMP NOT NULL CHECK (typeof(updated_at) = 'integer')
);
ALTER TABLE delivery_targets ADD COLUMN signing_secret BLOB;

-- +goose Down
ALTER TABLE delivery_targets DROP COLUMN signing_secret;
DROP TABLE secret_key_state;
