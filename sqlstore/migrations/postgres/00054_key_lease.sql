-- The key lease (sqlstore/keylease.go; docs/design.md, "The key lease"). A
-- server node that holds it answers the authentication's key read (the
-- epoch and a tenant's change version, sqlstore/keyread.go) from memory,
-- because no other session can change either while it holds it:
--
--   * the holder keeps a session advisory lock (key 0x7265636f6e6c, "reconl")
--     and names itself in key_lease.holder, the node id its connections
--     carry in the setting recon.node;
--   * every statement that changes auth_epoch or sync_counters first takes
--     the lock in shared mode for its transaction, unless it comes from the
--     holder: another node's, a command's or an operator's write waits until
--     the holder lets go (it polls for waiters every few milliseconds);
--   * holder changes are ordered against writes by a second lock (key
--     0x7265636f6e68, "reconh"): each such statement takes it shared for its
--     transaction before reading the holder, and a node becoming holder
--     takes it exclusively while it names itself;
--   * a holder that lets go clears key_lease.holder first. A writer that
--     finds the lock free but the holder still named (its session ended
--     without letting go: killed, or the server restarted) waits twice the
--     time a holder trusts its memory after its last check before it
--     changes anything, then clears the name;
--   * each such statement raises the notice "recon: key changed", by which
--     the holder's own connections learn that their transaction changed a
--     key, to forget what they kept once it ends.
--
-- PostgreSQL only: on SQLite the key read is in-process and nothing is kept.

-- +goose Up
CREATE TABLE key_lease (
    id     integer PRIMARY KEY CHECK (id = 1),
    holder text
);
INSERT INTO key_lease (id, holder) VALUES (1, NULL);

-- +goose StatementBegin
CREATE FUNCTION key_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    h text;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(x'7265636f6e68'::bigint);
    SELECT holder INTO h FROM key_lease WHERE id = 1;
    IF h IS DISTINCT FROM current_setting('recon.node', true) THEN
        PERFORM pg_advisory_xact_lock_shared(x'7265636f6e6c'::bigint);
        SELECT holder INTO h FROM key_lease WHERE id = 1;
        IF h IS DISTINCT FROM current_setting('recon.node', true) AND h IS NOT NULL THEN
            -- The holder's session ended without letting go: it may trust
            -- its memory for keyLeaseTrust (250 ms) after its last check.
            PERFORM pg_sleep(0.5);
            UPDATE key_lease SET holder = NULL WHERE id = 1 AND holder = h;
        END IF;
    END IF;
    RAISE NOTICE 'recon: key changed';
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER auth_epoch_key_change BEFORE UPDATE ON auth_epoch
    FOR EACH STATEMENT EXECUTE FUNCTION key_change();
CREATE TRIGGER sync_counters_key_change BEFORE INSERT OR UPDATE OR DELETE ON sync_counters
    FOR EACH STATEMENT EXECUTE FUNCTION key_change();

-- +goose Down
DROP TRIGGER sync_counters_key_change ON sync_counters;
DROP TRIGGER auth_epoch_key_change ON auth_epoch;
DROP FUNCTION key_change();
DROP TABLE key_lease;
