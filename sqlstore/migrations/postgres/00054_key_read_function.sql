-- The authentication's key read (sqlstore/keyread.go): the epoch and the
-- change version of each tenant asked for, in one snapshot. Every request
-- with a bearer token makes it (shared between concurrent requests), and
-- planned at each run, as every statement of the store is
-- (plan_cache_mode = force_custom_plan: a generic plan is made from the
-- table sizes of its moment and kept while tables grow), its planning cost
-- PostgreSQL 0.12 ms a read, three times its execution.
--
-- As a PL/pgSQL function its statement is planned once per connection and
-- the plan kept (force_generic_plan, for this function only), and that plan
-- is made with sequential scans off, so it is the index plan whatever the
-- tables held when it was made: auth_epoch by its key, and each tenant's
-- sync_counters row by its key, never a scan or a hash of the whole table,
-- which is what a plan made while sync_counters was small would keep
-- (docs/design.md, "The key read planned once"). STABLE: the statement
-- reads with the calling statement's snapshot, one snapshot for the epoch
-- and every version, as before. PostgreSQL only: SQLite reads in-process
-- and plans nothing worth keeping (sqliteKeyReader).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION key_read(tenants bigint[]) RETURNS TABLE (epoch bigint, tenant bigint, version bigint)
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
    SET enable_seqscan = off
AS $$
BEGIN
    RETURN QUERY
        SELECT e.n, t.id, COALESCE(c.seq, 0)
        FROM auth_epoch e
        LEFT JOIN unnest(tenants) AS t(id) ON true
        LEFT JOIN sync_counters c ON c.company_id = t.id
        WHERE e.id = 1;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION key_read(bigint[]);
