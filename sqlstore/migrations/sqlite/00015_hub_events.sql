-- The timeline of link tokens and sessions (recon hub events): every hub
-- event as it happens, whether or not the webhook wanted it, written in the
-- state change's transaction beside the outbox row when there is one. Keep
-- equivalent to ../postgres/00015_hub_events.sql.

-- +goose Up
CREATE TABLE hub_events (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    company_id     INTEGER NOT NULL REFERENCES companies (id) ON DELETE CASCADE,
    link_token_xid TEXT NOT NULL,
    event          TEXT NOT NULL,
    -- the event's metadata (docs/design.md, D8), as the webhook body carries it
    metadata       TEXT NOT NULL,
    at             TIMESTAMP NOT NULL CHECK (typeof(at) = 'integer'),
    -- the outbox row that sends it, when the webhook wanted it (no foreign
    -- key: delivered rows are deleted by retention, the timeline stays)
    delivery_id    INTEGER
);
CREATE INDEX hub_events_token ON hub_events (company_id, link_token_xid, id);

-- +goose Down
DROP TABLE hub_events;
