-- Dispatcher nodes and their heartbeats: a claim names the node that made
-- it, and the claims of a node whose heartbeat stopped are taken up by the
-- others long before their lease lapses. Keep equivalent to
-- ../sqlite/00007_delivery_nodes.sql.

-- +goose Up
-- One row per live dispatcher (recon serve process). Not tenant data: it is
-- the same for every company.
CREATE TABLE delivery_nodes (
    id           text        PRIMARY KEY,
    started_at   timestamptz NOT NULL,
    heartbeat_at timestamptz NOT NULL
);
-- The node holding a delivery's claim (NULL when unclaimed).
ALTER TABLE deliveries ADD COLUMN claimed_by text;
-- Claims held: a handful per node, never the bulk of the table.
CREATE INDEX deliveries_claimed ON deliveries (claimed_by) WHERE claimed_by IS NOT NULL;

-- +goose Down
DROP INDEX deliveries_claimed;
ALTER TABLE deliveries DROP COLUMN claimed_by;
DROP TABLE delivery_nodes;
