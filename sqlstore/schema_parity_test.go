package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// The migrations are written twice, once per engine (sqlstore/migrations/sqlite
// and sqlstore/migrations/postgres), and must describe one schema. The tests
// below check that they do, from what each engine's catalog says after
// migrating, and that every migration goes down and up again.

// sqlTypes maps each engine's declared column type to one name, so that a
// column has the same type on both engines when its names map to the same
// one. SQLite keeps the declared name (its affinity rules accept any);
// PostgreSQL reports information_schema.columns.data_type. The choices the
// migrations make (see sqlstore/migrations/sqlite/00001_init.sql):
//   - integers of any size are int (SQLite INTEGER; bigint, integer, smallint);
//   - times are time: SQLite TIMESTAMP columns hold Unix microseconds, which
//     the driver converts; PostgreSQL timestamptz (or timestamp);
//   - dates are date: SQLite DATE holds YYYY-MM-DD text;
//   - booleans are bool: SQLite BOOLEAN holds 0/1 under a CHECK;
//   - text is text; bytes are bytes (SQLite BLOB, PostgreSQL bytea).
var sqlTypes = map[string]string{
	"INTEGER": "int", "bigint": "int", "integer": "int", "smallint": "int",
	"TIMESTAMP": "time", "timestamp with time zone": "time", "timestamp without time zone": "time",
	"DATE": "date", "date": "date",
	"BOOLEAN": "bool", "boolean": "bool",
	"TEXT": "text", "text": "text",
	"BLOB": "bytes", "bytea": "bytes",
}

// parityAllowed lists the known, deliberate differences between the two
// schemas, as the lines sqliteSchema and postgresSchema write, each with its
// reason. A line listed here may be on one engine and not the other.
var parityAllowed = map[string]string{
	// PostgreSQL checks the same rule once per statement, by triggers
	// (migration 00051); TestTransactionsStayInTheirAccountsCompany checks
	// that both engines behave alike.
	"foreign key transactions (company_id, bank_account_id) references bank_accounts (company_id, id) on delete cascade": "checked per statement on PostgreSQL",
	// The key lease (migration 00054) answers PostgreSQL's key read from
	// memory; SQLite's key read is in-process and needs none.
	"table key_lease": "PostgreSQL's key lease",
	"column key_lease.id int not null default none":  "PostgreSQL's key lease",
	"column key_lease.holder text null default none": "PostgreSQL's key lease",
	"primary key key_lease (id)":                     "PostgreSQL's key lease",
}

// TestSchemaParity migrates a fresh database of each engine to the latest
// version and compares what their catalogs say: tables, columns (type
// through sqlTypes, nullability, default through normDefault), primary keys, unique constraints, indexes
// (columns, uniqueness, partial or not) and foreign keys (columns, target,
// ON DELETE).
func TestSchemaParity(t *testing.T) {
	t.Parallel()
	lines := map[string][]string{}
	for _, engine := range dbtest.Engines() {
		db := openRaw(t, engine)
		var err error
		if engine == sqlstore.EngineSQLite {
			lines[engine], err = sqliteSchema(t.Context(), db)
		} else {
			lines[engine], err = postgresSchema(t.Context(), db)
		}
		if err != nil {
			t.Fatalf("%s catalog: %v", engine, err)
		}
	}
	sqlite, postgres := lines[sqlstore.EngineSQLite], lines[sqlstore.EnginePostgres]
	if len(sqlite) == 0 || len(postgres) == 0 {
		t.Fatalf("empty catalog: %d lines on SQLite, %d on PostgreSQL", len(sqlite), len(postgres))
	}
	for _, d := range []struct{ only, other string }{{"sqlite", "postgres"}, {"postgres", "sqlite"}} {
		for _, l := range lines[d.only] {
			if _, ok := parityAllowed[l]; !ok && !slices.Contains(lines[d.other], l) {
				t.Errorf("only on %s: %s", d.only, l)
			}
		}
	}
	if t.Failed() && testing.Verbose() {
		t.Logf("SQLite:\n%s\nPostgreSQL:\n%s", strings.Join(sqlite, "\n"), strings.Join(postgres, "\n"))
	}
}

// TestMigrationsGoDownAndUp runs, on each engine, every migration up, then
// every one down to version 0 one at a time, then up again to the latest:
// each Down section undoes its Up section well enough for it to run again.
func TestMigrationsGoDownAndUp(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := t.Context()
		db, err := sqlstore.Open(ctx, dbtest.NewURL(t, engine))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		versions := migrationVersions(t, engine)
		for i := len(versions) - 1; i >= 0; i-- {
			to := int64(0)
			if i > 0 {
				to = versions[i-1]
			}
			if err := db.MigrateTo(ctx, to); err != nil {
				t.Fatalf("down from %05d to %05d: %v", versions[i], to, err)
			}
		}
		for _, v := range versions {
			if err := db.MigrateTo(ctx, v); err != nil {
				t.Fatalf("up to %05d: %v", v, err)
			}
		}
	})
}

// migrationVersions lists the versions of the engine's migration files, in order.
func migrationVersions(t *testing.T, engine string) []int64 {
	t.Helper()
	files, err := fs.Glob(os.DirFS(filepath.Join("migrations", engine)), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations of %s: %v, %d files", engine, err, len(files))
	}
	var vs []int64
	for _, f := range files {
		v, err := strconv.ParseInt(strings.SplitN(f, "_", 2)[0], 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", f, err)
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// openRaw migrates a fresh database of the engine and returns a plain
// database/sql handle on it, to read its catalog.
func openRaw(t *testing.T, engine string) *sql.DB {
	t.Helper()
	url := dbtest.NewURL(t, engine)
	store, err := sqlstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	store.Close()
	driver, dsn := "pgx", url
	if engine == sqlstore.EngineSQLite {
		driver, dsn = "sqlite", strings.TrimPrefix(url, "sqlite:")
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ignoredTable is goose's own bookkeeping, which differs by engine.
func ignoredTable(name string) bool { return name == "goose_db_version" }

func mapType(engine, declared string) string {
	if m, ok := sqlTypes[declared]; ok {
		return m
	}
	return engine + ":" + declared
}

// pgCast is the cast PostgreSQL adds to a default it reports ('x'::text).
var pgCast = regexp.MustCompile(`::[a-z ]+$`)

// normDefault writes a column's default the same way on both engines:
// without PostgreSQL's cast, booleans as SQLite's 0 and 1, none as "none".
func normDefault(d string) string {
	d = pgCast.ReplaceAllString(d, "")
	switch d {
	case "":
		return "none"
	case "false":
		return "0"
	case "true":
		return "1"
	}
	return d
}

func nullability(notNull bool) string {
	if notNull {
		return "not null"
	}
	return "null"
}

// queryRows runs a query of n columns, each read as a string (NULL as "").
func queryRows(ctx context.Context, db *sql.DB, n int, query string, args ...any) ([][]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", query, err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("%s: %w", query, err)
		}
		row := make([]string, n)
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// sqliteSchema describes a SQLite database's schema as sorted lines.
func sqliteSchema(ctx context.Context, db *sql.DB) ([]string, error) {
	tables, err := queryRows(ctx, db, 1, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, tr := range tables {
		table := tr[0]
		if ignoredTable(table) {
			continue
		}
		lines = append(lines, "table "+table)
		cols, err := queryRows(ctx, db, 6, `SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, table)
		if err != nil {
			return nil, err
		}
		var pk []string
		for _, c := range cols {
			// A primary key's columns are not null on PostgreSQL; SQLite
			// allows NULL in a non-INTEGER one but the schema never stores it.
			notNull := c[3] == "1" || c[5] != "0"
			lines = append(lines, fmt.Sprintf("column %s.%s %s %s default %s", table, c[1], mapType("sqlite", c[2]), nullability(notNull), normDefault(c[4])))
			if c[5] != "0" {
				pk = append(pk, c[5]+" "+c[1])
			}
		}
		if len(pk) > 0 {
			slices.SortFunc(pk, func(a, b string) int {
				ai, _ := strconv.Atoi(strings.Fields(a)[0])
				bi, _ := strconv.Atoi(strings.Fields(b)[0])
				return ai - bi
			})
			for i := range pk {
				pk[i] = strings.Fields(pk[i])[1]
			}
			lines = append(lines, fmt.Sprintf("primary key %s (%s)", table, strings.Join(pk, ", ")))
		}
		indexes, err := queryRows(ctx, db, 4, `SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, table)
		if err != nil {
			return nil, err
		}
		for _, ix := range indexes {
			if ix[2] == "pk" {
				continue // the primary key, above
			}
			info, err := queryRows(ctx, db, 3, `SELECT seqno, cid, name FROM pragma_index_info(?) ORDER BY seqno`, ix[0])
			if err != nil {
				return nil, err
			}
			var cols []string
			for _, c := range info {
				if c[1] == "-2" {
					cols = append(cols, "<expr>")
				} else {
					cols = append(cols, c[2])
				}
			}
			if ix[2] == "u" { // a UNIQUE constraint: unnamed in SQLite
				lines = append(lines, fmt.Sprintf("unique %s (%s)", table, strings.Join(cols, ", ")))
				continue
			}
			lines = append(lines, indexLine(table, ix[0], ix[1] == "1", ix[3] == "1", cols))
		}
		fks, err := queryRows(ctx, db, 6, `SELECT id, seq, "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table)
		if err != nil {
			return nil, err
		}
		type fk struct {
			target, onDelete string
			from, to         []string
		}
		byID := map[string]*fk{}
		var ids []string
		for _, f := range fks {
			k := byID[f[0]]
			if k == nil {
				k = &fk{target: f[2], onDelete: f[5]}
				byID[f[0]] = k
				ids = append(ids, f[0])
			}
			k.from = append(k.from, f[3])
			k.to = append(k.to, f[4])
		}
		for _, id := range ids {
			k := byID[id]
			lines = append(lines, fkLine(table, k.from, k.target, k.to, k.onDelete))
		}
	}
	slices.Sort(lines)
	return lines, nil
}

func indexLine(table, name string, unique, partial bool, cols []string) string {
	kind := "index"
	if unique {
		kind = "unique index"
	}
	if partial {
		kind = "partial " + kind
	}
	return fmt.Sprintf("%s %s on %s (%s)", kind, name, table, strings.Join(cols, ", "))
}

func fkLine(table string, from []string, target string, to []string, onDelete string) string {
	return fmt.Sprintf("foreign key %s (%s) references %s (%s) on delete %s",
		table, strings.Join(from, ", "), target, strings.Join(to, ", "), strings.ToLower(onDelete))
}

// postgresIdent is an index element that is a plain column name.
var postgresIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// postgresSchema describes a PostgreSQL database's public schema as sorted lines.
func postgresSchema(ctx context.Context, db *sql.DB) ([]string, error) {
	var lines []string
	tables, err := queryRows(ctx, db, 1, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	for _, tr := range tables {
		if !ignoredTable(tr[0]) {
			lines = append(lines, "table "+tr[0])
		}
	}
	cols, err := queryRows(ctx, db, 5, `SELECT table_name, column_name, data_type, is_nullable, column_default
		FROM information_schema.columns WHERE table_schema = 'public'`)
	if err != nil {
		return nil, err
	}
	for _, c := range cols {
		if !ignoredTable(c[0]) {
			lines = append(lines, fmt.Sprintf("column %s.%s %s %s default %s", c[0], c[1], mapType("postgres", c[2]), nullability(c[3] == "NO"), normDefault(c[4])))
		}
	}
	// Constraints: primary keys, unique constraints, foreign keys, their
	// columns in key order. confdeltype: a no action, r restrict, c cascade,
	// n set null, d set default.
	cons, err := queryRows(ctx, db, 6, `
		SELECT c.conrelid::regclass::text, c.contype,
		       (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
		        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum),
		       COALESCE(c.confrelid::regclass::text, ''),
		       (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
		        JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum),
		       c.confdeltype
		FROM pg_constraint c JOIN pg_namespace ns ON ns.oid = c.connamespace
		WHERE ns.nspname = 'public' AND c.contype IN ('p', 'u', 'f')`)
	if err != nil {
		return nil, err
	}
	onDelete := map[string]string{"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}
	for _, c := range cons {
		if ignoredTable(c[0]) {
			continue
		}
		switch c[1] {
		case "p":
			lines = append(lines, fmt.Sprintf("primary key %s (%s)", c[0], c[2]))
		case "u":
			lines = append(lines, fmt.Sprintf("unique %s (%s)", c[0], c[2]))
		case "f":
			lines = append(lines, fkLine(c[0], strings.Split(c[2], ", "), c[3], strings.Split(c[4], ", "), onDelete[c[5]]))
		}
	}
	// Indexes made by CREATE INDEX: those backing no constraint.
	indexes, err := queryRows(ctx, db, 6, `
		SELECT t.relname, i.relname, x.indisunique::text, (x.indpred IS NOT NULL)::text, x.indnkeyatts::text, x.indexrelid::text
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE ns.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`)
	if err != nil {
		return nil, err
	}
	for _, ix := range indexes {
		if ignoredTable(ix[0]) {
			continue
		}
		n, _ := strconv.Atoi(ix[4])
		var cols []string
		for k := 1; k <= n; k++ {
			var def string
			if err := db.QueryRowContext(ctx, `SELECT pg_get_indexdef($1::oid, $2, true)`, ix[5], k).Scan(&def); err != nil {
				return nil, err
			}
			if !postgresIdent.MatchString(def) {
				def = "<expr>"
			}
			cols = append(cols, def)
		}
		lines = append(lines, indexLine(ix[0], ix[1], ix[2] == "true", ix[3] == "true", cols))
	}
	slices.Sort(lines)
	return lines, nil
}
