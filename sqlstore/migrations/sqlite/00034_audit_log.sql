-- The audit log (docs/dashboard.md, Audit log): one row per change of the
-- settings, users and roles, secrets, targets, refunds and exception
-- decisions, written in the change's own transaction where it is a store
-- write (recon.Audited). company_id is the tenant's: an entry is read in the
-- mode it was made in. The actor's columns are copies, not foreign keys: the
-- record outlives a deleted user or client. changes is a JSON array of
-- {field, before, after}, never a secret's value (recon.AuditRotated).
-- Keep equivalent to ../postgres/00034_audit_log.sql.

-- +goose Up
CREATE TABLE audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id      INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    created_at      TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    actor_user_id   INTEGER,
    actor_email     TEXT    NOT NULL DEFAULT '',
    actor_client_id TEXT    NOT NULL DEFAULT '',
    via             TEXT    NOT NULL,
    ip              TEXT    NOT NULL DEFAULT '',
    user_agent      TEXT    NOT NULL DEFAULT '',
    action          TEXT    NOT NULL,
    object          TEXT    NOT NULL DEFAULT '',
    changes         TEXT    NOT NULL DEFAULT '[]'
);
-- The page, newest first, and its filter by action.
CREATE INDEX audit_log_list ON audit_log (company_id, created_at DESC, id DESC);
CREATE INDEX audit_log_action ON audit_log (company_id, action, created_at DESC);

-- +goose Down
DROP TABLE audit_log;
