-- Alerts (docs/dashboard.md, Alerts): a company's alert settings, each
-- user's switches, and the alerts themselves, each made once per (tenant,
-- kind, key) whichever node finds it (the unique key) and sent by the node
-- that holds its claim (claimed_by until claimed_until, as deliveries'
-- leases), so that several nodes send it once.
-- Keep equivalent to ../postgres/00035_alerts.sql.

-- +goose Up
-- One row per company that saved its settings (recon.DefaultAlertSettings
-- otherwise). chat_url is the chat tool's webhook (Telegram's holds the bot
-- token). daily_hour -1: no daily summary; queue_threshold 0: no queue alert.
CREATE TABLE alert_settings (
    company_id       INTEGER PRIMARY KEY REFERENCES companies (id) ON DELETE CASCADE,
    failing_attempts INTEGER NOT NULL CHECK (failing_attempts BETWEEN 1 AND 100),
    queue_threshold  INTEGER NOT NULL CHECK (queue_threshold >= 0),
    daily_hour       INTEGER NOT NULL CHECK (daily_hour BETWEEN -1 AND 23),
    chat_kind        TEXT    NOT NULL DEFAULT '',
    chat_url         TEXT    NOT NULL DEFAULT '',
    chat_id          TEXT    NOT NULL DEFAULT ''
);

-- One row per user who chose (all on otherwise).
CREATE TABLE alert_prefs (
    user_id INTEGER PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    failing BOOLEAN NOT NULL CHECK (failing IN (0, 1)),
    queue   BOOLEAN NOT NULL CHECK (queue IN (0, 1)),
    daily   BOOLEAN NOT NULL CHECK (daily IN (0, 1))
);

CREATE TABLE alert_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id    INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    kind          TEXT    NOT NULL,
    event_key     TEXT    NOT NULL,
    subject       TEXT    NOT NULL,
    body          TEXT    NOT NULL,
    created_at    TIMESTAMP NOT NULL CHECK (typeof(created_at) = 'integer'),
    claimed_by    TEXT    NOT NULL DEFAULT '',
    claimed_until TIMESTAMP,
    sent_at       TIMESTAMP,
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT    NOT NULL DEFAULT '',
    UNIQUE (company_id, kind, event_key)
);
-- The dashboard's list, newest first.
CREATE INDEX alert_events_list ON alert_events (company_id, id DESC);

-- +goose Down
DROP TABLE alert_events;
DROP TABLE alert_prefs;
DROP TABLE alert_settings;
