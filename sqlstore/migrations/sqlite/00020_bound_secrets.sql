-- Sealed secrets bound to their rows (sqlstore/secret.go): the additional
-- data of a value sealed from now on (version 2) names its table, column,
-- row and tenant, so a value copied into another row no longer opens.
-- The key is not in the database, so this migration cannot re-seal: it
-- records that the values of a database that already has a key (version
-- 1) still wait for it, and UseSecretKey re-seals them at the next start,
-- in one transaction that sets seal_version to 2 (sqlstore.bindSealed);
-- after that a version-1 value is refused. A database without a key yet
-- gets its row with version 2. Down: a version-2 value does not open in a
-- Recon of before this migration; going down needs a restored backup.
-- Keep equivalent to ../postgres/00020_bound_secrets.sql.

-- +goose Up
ALTER TABLE secret_key_state ADD COLUMN seal_version integer NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE secret_key_state DROP COLUMN seal_version;
