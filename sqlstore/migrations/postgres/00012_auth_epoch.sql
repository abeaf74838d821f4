-- The authentication epoch: a counter that every change able to refuse a
-- token that was accepted moves, in the same transaction as the change. A
-- node keeps the callers it authenticated while the counter stays put, so a
-- request costs one single-row read instead of the token, company and user
-- lookups, and a revoked token, a changed role or a deactivated company is
-- refused at once on every node (oauth.Server.Authenticate). Triggers, so
-- that no writer (server, CLI, another node) can forget it. Keep equivalent
-- to ../sqlite/00012_auth_epoch.sql.

-- +goose Up
CREATE TABLE auth_epoch (
    id smallint PRIMARY KEY CHECK (id = 1),
    n  bigint   NOT NULL
);
INSERT INTO auth_epoch (id, n) VALUES (1, 0);

-- +goose StatementBegin
CREATE FUNCTION bump_auth_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE auth_epoch SET n = n + 1 WHERE id = 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- Statement triggers: one bump per statement, whatever the rows. Inserts
-- refuse nothing that was accepted, so they do not move the counter.
CREATE TRIGGER oauth_tokens_auth_epoch AFTER UPDATE OR DELETE ON oauth_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
CREATE TRIGGER oauth_clients_auth_epoch AFTER UPDATE OR DELETE ON oauth_clients
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
CREATE TRIGGER users_auth_epoch AFTER UPDATE OR DELETE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();
CREATE TRIGGER companies_auth_epoch AFTER UPDATE OR DELETE ON companies
    FOR EACH STATEMENT EXECUTE FUNCTION bump_auth_epoch();

-- +goose Down
DROP TRIGGER companies_auth_epoch ON companies;
DROP TRIGGER users_auth_epoch ON users;
DROP TRIGGER oauth_clients_auth_epoch ON oauth_clients;
DROP TRIGGER oauth_tokens_auth_epoch ON oauth_tokens;
DROP FUNCTION bump_auth_epoch();
DROP TABLE auth_epoch;
