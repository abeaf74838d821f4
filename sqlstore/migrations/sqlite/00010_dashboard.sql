-- Dashboard sign-in sessions (issue 11). The cookie holds a random token;
-- only its SHA-256 hash is stored. A session names the user's live company
-- and which of its tenants it shows (live), and ends at expires_at or after
-- an idle while since last_seen_at. Keep equivalent to
-- ../postgres/00010_dashboard.sql.

-- +goose Up
CREATE TABLE dashboard_sessions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash   BLOB    NOT NULL UNIQUE,
    company_id   INTEGER NOT NULL,
    user_id      INTEGER NOT NULL,
    live         BOOLEAN NOT NULL CHECK (live IN (0, 1)),
    created_at   TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    last_seen_at TIMESTAMP NOT NULL CHECK (typeof(last_seen_at) = 'integer'),
    expires_at   TIMESTAMP NOT NULL CHECK (typeof(expires_at) = 'integer'),
    -- a deleted user (or company) takes its sessions along
    FOREIGN KEY (company_id, user_id) REFERENCES users (company_id, id) ON DELETE CASCADE
);
-- sign-in sweeps the sessions past their absolute end
CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at);

-- +goose Down
DROP TABLE dashboard_sessions;
