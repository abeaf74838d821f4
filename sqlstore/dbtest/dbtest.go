// Package dbtest gives the tests of every package fresh databases of both
// engines: a SQLite file in the test's temporary directory, and a new
// database on a PostgreSQL server, dropped (WITH FORCE) when the test ends.
// OpenStore's databases are copies of one template per engine migrated once
// per test process (a database on the server, a file's content in memory),
// which is cheaper than migrating each.
//
// The PostgreSQL server is RECON_TEST_POSTGRES_URL when set (a URL whose user
// may create and drop databases). Otherwise the first test that asks for
// PostgreSQL starts a throwaway cluster that lives as long as the test
// binary: initdb + pg_ctl into a recon-dbtest-pg-* directory under /dev/shm
// (or os.TempDir), as the postgres user when running as root, trust auth,
// fsync off, listening on 127.0.0.1 and a unix socket in that directory.
// Call Main from TestMain so that it is stopped; the clusters of test
// processes that were killed are removed by the next one that starts.
//
// When there is no PostgreSQL, the PostgreSQL subtests are skipped with a
// loud message, or fail when RECON_TEST_REQUIRE_POSTGRES=1 (CI sets it).
// Note that `go test ./...` shows the messages of passing packages only with
// -v: the failure mode is what keeps CI honest.
//
//	func TestMain(m *testing.M) { dbtest.Main(m) }
//
//	func TestThing(t *testing.T) {
//		dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
//			t.Parallel()
//			db := dbtest.OpenStore(t, engine) // fresh, migrated, closed at cleanup
//			...
//		})
//	}
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for the admin connection

	"recon/internal/testkit"
	"recon/sqlstore"
)

// Environment variables the harness reads.
const (
	// EnvPostgresURL names a PostgreSQL server to use instead of a throwaway
	// cluster, as a URL whose user may create databases.
	EnvPostgresURL = "RECON_TEST_POSTGRES_URL"
	// EnvRequirePostgres=1 turns "PostgreSQL not available" from a skip into a failure.
	EnvRequirePostgres = "RECON_TEST_REQUIRE_POSTGRES"
	// EnvStatStatements, set to a directory, loads pg_stat_statements (with
	// planning times) and auto_explain (the plans of statements over 3 ms,
	// those run by triggers and foreign keys too) into the throwaway
	// clusters this process starts, whose server logs are copied into that
	// directory as postgres-PORT.log when they stop (the external
	// benchmark's -pgstat).
	EnvStatStatements = "RECON_TEST_PG_STAT_STATEMENTS"
)

// Engines returns the engines every storage test runs on.
func Engines() []string { return []string{sqlstore.EngineSQLite, sqlstore.EnginePostgres} }

// Main runs the tests of a package, then stops the throwaway PostgreSQL
// cluster if one was started, and exits with the tests' code. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if msg := server.shutdown(); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	if msg := durableServer.shutdown(); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	}
	os.Exit(code)
}

// ForEachEngine runs fn as the subtests "sqlite" and "postgres", with the
// engine's name: fn calls OpenStore(t, engine) for a store, or NewURL(t,
// engine) for a database to hand to a process or a command. fn may call
// t.Parallel. A PostgreSQL subtest skips (or fails) when OpenStore or NewURL
// finds no server.
func ForEachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	t.Helper()
	for _, engine := range Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, engine) })
	}
}

// NewURL returns the URL of a fresh, empty database of the engine ("sqlite"
// or "postgres"), removed when the test ends. For PostgreSQL it skips the test
// when no server is available (see the package comment).
func NewURL(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case sqlstore.EngineSQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "recon.db")
	case sqlstore.EnginePostgres:
		return server.newDatabase(t, "")
	}
	t.Fatalf("dbtest: unknown engine %q (want %q or %q)", engine, sqlstore.EngineSQLite, sqlstore.EnginePostgres)
	return ""
}

// NewMigratedURL returns the URL of a fresh database of the engine already
// migrated to the latest version, removed when the test ends: a copy of the
// template OpenStore copies, with no secret key set up yet (the first
// command or server that opens it does that, as on a new database). Give it
// to a process or a command whose test is not about migrating: every
// command and server migrates the database it opens, and on a new one
// goose's parsing of the 50-odd migration files (a 4 MiB buffer per line)
// was 40% of the CPU time of cmd/recon's tests under the race detector. The
// tests of migrating at start (cmd/recon's TestEndToEnd, TestTwoNodes, ...)
// keep NewURL's empty databases.
func NewMigratedURL(t testing.TB, engine string) string {
	t.Helper()
	switch engine {
	case sqlstore.EngineSQLite:
		return sqliteTemplate.copyTo(t)
	case sqlstore.EnginePostgres:
		template, err := server.migratedTemplate(t)
		if err != nil {
			t.Fatalf("dbtest: %v", err)
		}
		return server.newDatabase(t, template)
	}
	t.Fatalf("dbtest: unknown engine %q (want %q or %q)", engine, sqlstore.EngineSQLite, sqlstore.EnginePostgres)
	return ""
}

// durableServer is the durable cluster of NewDurableURL, started on first use.
var durableServer = postgresServer{durable: true}

// NewDurableURL returns the URL of a fresh, empty PostgreSQL database on a
// second throwaway cluster, on the disk (os.TempDir) with fsync,
// synchronous_commit and full_page_writes on: what a production server runs
// with, for benchmarks that compare the two. It ignores EnvPostgresURL.
func NewDurableURL(t testing.TB) string {
	t.Helper()
	return durableServer.newDatabase(t, "")
}

// OpenStore opens a fresh, migrated database of the engine, closed when the test ends.
func OpenStore(t testing.TB, engine string) *sqlstore.DB {
	t.Helper()
	// A copy of a database migrated once per process (a file's content for
	// SQLite): copying is cheaper than migrating, and the more so the more
	// migrations there are.
	return OpenURL(t, NewMigratedURL(t, engine))
}

// TestSecretKey is the sealing key of test databases on PostgreSQL (as
// RECON_SECRET_KEY would give it). Never use it outside tests.
const TestSecretKey = "1:dGVzdCBrZXkgb2YgcmVjb24gZGJ0ZXN0LCBub3Qgc2U="

// OpenURL opens (with opts) and migrates the database at databaseURL,
// closed when the test ends.
func OpenURL(t testing.TB, databaseURL string, opts ...sqlstore.Option) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, databaseURL, opts...)
	if err != nil {
		t.Fatalf("dbtest: open %s: %v", databaseURL, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("dbtest: migrate %s: %v", databaseURL, err)
	}
	// Every opening of one database finds the same key: beside a SQLite
	// file, as recon serve keeps it; a fixed test key on PostgreSQL.
	src := sqlstore.KeySource{File: db.DefaultKeyFile()}
	if src.File == "" {
		src = sqlstore.KeySource{Keys: TestSecretKey}
	}
	if err := db.UseSecretKey(ctx, src); err != nil {
		t.Fatalf("dbtest: secret key of %s: %v", databaseURL, err)
	}
	return db
}

// databaseSeq numbers the databases this process creates; databasePrefix
// tells them apart from other processes' on a shared server.
var (
	databaseSeq    atomic.Int64
	databasePrefix = "recon_test_" + randomHex(4) + "_"
)

// newDatabase creates a database on the server and returns its URL.
// The new database is a copy of template, or empty when template is "".
func (s *postgresServer) newDatabase(t testing.TB, template string) string {
	t.Helper()
	admin, adminURL := s.serverFor(t)
	name := databasePrefix + fmt.Sprint(databaseSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := "CREATE DATABASE " + name
	if template != "" {
		create += " TEMPLATE " + template
		// PostgreSQL 15 copies through the WAL by default, which suits
		// large databases; copying the files is 4 times faster for the
		// small template (and its copies drop 2 times faster).
		if s.version >= 150000 {
			create += " STRATEGY FILE_COPY"
		}
	}
	if _, err := admin.ExecContext(ctx, create); err != nil {
		t.Fatalf("dbtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("dbtest: drop database %s: %v", name, err)
		}
	})
	return databaseURL(adminURL, name)
}

// databaseURL returns the URL of the named database on the server at adminURL.
func databaseURL(adminURL *url.URL, name string) string {
	u := *adminURL
	u.Path = "/" + name
	return u.String()
}

// serverFor returns the admin connection and URL of the PostgreSQL
// server, starting the throwaway cluster on first use. Without a server it
// skips t, or fails it when EnvRequirePostgres=1.
func (s *postgresServer) serverFor(t testing.TB) (*sql.DB, *url.URL) {
	t.Helper()
	admin, adminURL, err := s.get()
	if err == nil {
		testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfRan)
		return admin, adminURL
	}
	if os.Getenv(EnvRequirePostgres) == "1" {
		t.Fatalf("dbtest: %v\n%s", err, failHint)
	}
	testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfSkipped)
	t.Skipf("dbtest: %v\n%s", err, skipHint)
	return nil, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// quoteLog returns the last lines of a log file, for error messages.
func quoteLog(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "\n\t" + strings.Join(lines, "\n\t")
}

// Parallel makes at least n parallel tests run at once, unless -parallel is
// on the command line. go test runs as many as there are CPUs by default,
// which suits tests that compute; storage tests mostly wait on their
// databases, so with more of them in flight the CPUs (the database
// servers' included) stay busy. Call it from TestMain, before Main.
func Parallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	f := flag.Lookup("test.parallel")
	if given || f == nil {
		return
	}
	if current, err := strconv.Atoi(f.Value.String()); err == nil && current < n {
		f.Value.Set(strconv.Itoa(n))
	}
}
