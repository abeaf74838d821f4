-- The key lease's holder keeps a tenant's change version up to date from its
-- own writes instead of forgetting everything it kept (sqlstore/keylease.go;
-- docs/design.md, "The key lease"). Migration 00054's statement trigger on
-- sync_counters still takes the lease's locks before every write, but says
-- nothing on an insert or update; a row trigger after the write raises the
-- notice "recon: version changed <company_id> <seq>" instead, by which the
-- holder's connection learns the version its transaction wrote, and keeps
-- it once that transaction has committed. A delete, and every change of
-- auth_epoch, still raise "recon: key changed": the holder forgets what it
-- kept.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION key_change() RETURNS trigger LANGUAGE plpgsql AS $$
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
    -- With the argument 'versions', the rows say what changed
    -- (version_change).
    IF TG_NARGS = 0 THEN
        RAISE NOTICE 'recon: key changed';
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE 'recon: version changed % %', NEW.company_id, NEW.seq;
    RETURN NULL;
END $$;
-- +goose StatementEnd

DROP TRIGGER sync_counters_key_change ON sync_counters;
CREATE TRIGGER sync_counters_key_change BEFORE DELETE ON sync_counters
    FOR EACH STATEMENT EXECUTE FUNCTION key_change();
CREATE TRIGGER sync_counters_key_lock BEFORE INSERT OR UPDATE ON sync_counters
    FOR EACH STATEMENT EXECUTE FUNCTION key_change('versions');
CREATE TRIGGER sync_counters_version_change AFTER INSERT OR UPDATE ON sync_counters
    FOR EACH ROW EXECUTE FUNCTION version_change();

-- +goose Down
DROP TRIGGER sync_counters_version_change ON sync_counters;
DROP TRIGGER sync_counters_key_lock ON sync_counters;
DROP TRIGGER sync_counters_key_change ON sync_counters;
CREATE TRIGGER sync_counters_key_change BEFORE INSERT OR UPDATE OR DELETE ON sync_counters
    FOR EACH STATEMENT EXECUTE FUNCTION key_change();
DROP FUNCTION version_change();
