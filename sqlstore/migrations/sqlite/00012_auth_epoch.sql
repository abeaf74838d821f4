-- The authentication epoch: a counter that every change able to refuse a
-- token that was accepted moves, in the same transaction as the change. A
-- node keeps the callers it authenticated while the counter stays put, so a
-- request costs one single-row read instead of the token, company and user
-- lookups, and a revoked token, a changed role or a deactivated company is
-- refused at once (oauth.Server.Authenticate). Triggers, so that no writer
-- (server, CLI) can forget it. Keep equivalent to
-- ../postgres/00012_auth_epoch.sql.

-- +goose Up
CREATE TABLE auth_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO auth_epoch (id, n) VALUES (1, 0);

-- SQLite has row triggers only: one bump per row changed. Inserts refuse
-- nothing that was accepted, so they do not move the counter.
-- +goose StatementBegin
CREATE TRIGGER oauth_tokens_auth_epoch_update AFTER UPDATE ON oauth_tokens
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_tokens_auth_epoch_delete AFTER DELETE ON oauth_tokens
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_clients_auth_epoch_update AFTER UPDATE ON oauth_clients
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_clients_auth_epoch_delete AFTER DELETE ON oauth_clients
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_auth_epoch_update AFTER UPDATE ON users
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_auth_epoch_delete AFTER DELETE ON users
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER companies_auth_epoch_update AFTER UPDATE ON companies
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER companies_auth_epoch_delete AFTER DELETE ON companies
BEGIN UPDATE auth_epoch SET n = n + 1 WHERE id = 1; END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER companies_auth_epoch_delete;
DROP TRIGGER companies_auth_epoch_update;
DROP TRIGGER users_auth_epoch_delete;
DROP TRIGGER users_auth_epoch_update;
DROP TRIGGER oauth_clients_auth_epoch_delete;
DROP TRIGGER oauth_clients_auth_epoch_update;
DROP TRIGGER oauth_tokens_auth_epoch_delete;
DROP TRIGGER oauth_tokens_auth_epoch_update;
DROP TABLE auth_epoch;
