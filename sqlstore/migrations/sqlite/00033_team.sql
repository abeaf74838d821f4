-- A team that can sign in (docs/dashboard.md, Team): a user can be
-- deactivated (deactivated_at: cannot sign in, its sessions and OAuth tokens
-- are gone) and has a language for the e-mails it gets (vi by default);
-- user_tokens are the one-time links of invitations and password resets,
-- stored as the SHA-256 of the token, each used at most once before
-- expires_at (an invitation and an Admin's reset link name one user row; a
-- reset asked for by e-mail names the address, and resets every active user
-- row of it); dashboard_session_users are the other user rows of the same
-- e-mail whose password the person gave at sign-in: the companies the
-- session may switch to. Keep equivalent to ../postgres/00033_team.sql.

-- +goose Up
ALTER TABLE users ADD COLUMN deactivated_at TIMESTAMP CHECK (deactivated_at IS NULL OR typeof(deactivated_at) = 'integer');
ALTER TABLE users ADD COLUMN lang TEXT NOT NULL DEFAULT 'vi';
-- the sign-in looks an address up across companies
CREATE INDEX users_email ON users (email);

CREATE TABLE user_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash BLOB    NOT NULL UNIQUE,
    -- 'invite' or 'reset'
    kind       TEXT    NOT NULL,
    email      TEXT    NOT NULL,
    -- NULL for a reset asked for by e-mail (every active user of the address)
    user_id    INTEGER REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    expires_at TIMESTAMP NOT NULL CHECK (typeof(expires_at) = 'integer'),
    used_at    TIMESTAMP CHECK (used_at IS NULL OR typeof(used_at) = 'integer')
);
CREATE INDEX user_tokens_email ON user_tokens (email);
CREATE INDEX user_tokens_user_id ON user_tokens (user_id);

CREATE TABLE dashboard_session_users (
    session_id INTEGER NOT NULL REFERENCES dashboard_sessions (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (session_id, user_id)
);
CREATE INDEX dashboard_session_users_user_id ON dashboard_session_users (user_id);

-- +goose Down
DROP TABLE dashboard_session_users;
DROP TABLE user_tokens;
DROP INDEX users_email;
ALTER TABLE users DROP COLUMN lang;
ALTER TABLE users DROP COLUMN deactivated_at;
