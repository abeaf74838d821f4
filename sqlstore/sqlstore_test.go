package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
	"recon/sqlstore/storetest"
)

// TestMain runs 8 tests at once even on fewer CPUs: they wait on their
// databases more than they compute (see dbtest.Parallel).
func TestMain(m *testing.M) {
	dbtest.Parallel(8)
	dbtest.Main(m)
}

func TestStore(t *testing.T) {
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) recon.Store { return dbtest.OpenStore(t, engine) })
		})
	}
}

func TestOpenInvalidURL(t *testing.T) {
	t.Parallel()
	for _, databaseURL := range []string{
		"mysql://user@localhost/recon",
		"recon.db",
		"postgre://localhost/recon",
		"sqlite:",
		"sqlite://",
		"sqlite::memory:",
		"sqlite:file:recon.db",
		"sqlite:recon.db?mode=ro",
	} {
		_, err := sqlstore.Open(t.Context(), databaseURL)
		var e *recon.Error
		if !errors.As(err, &e) || e.Code != recon.EINVALID {
			t.Errorf("Open(%q): got error %v, want code %s", databaseURL, err, recon.EINVALID)
			continue
		}
		if !strings.Contains(e.Message, `"sqlite:PATH"`) || !strings.Contains(e.Message, `"postgres://..."`) {
			t.Errorf("Open(%q): message %q does not list the accepted forms", databaseURL, e.Message)
		}
	}
}

func TestOpenHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := sqlstore.Open(t.Context(), "mysql://root:hunter2@localhost/recon")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got error %v, want one without the password", err)
	}
}

func TestOpenSQLiteForms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ url, file string }{
		{"sqlite:" + filepath.Join(dir, "a.db"), "a.db"},
		{"sqlite://" + filepath.Join(dir, "b.db"), "b.db"}, // sqlite:///abs/path
	} {
		db, err := sqlstore.Open(t.Context(), tc.url)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.url, err)
		}
		if db.Engine() != sqlstore.EngineSQLite {
			t.Errorf("Open(%q).Engine() = %q", tc.url, db.Engine())
		}
		db.Close()
		if _, err := os.Stat(filepath.Join(dir, tc.file)); err != nil {
			t.Errorf("Open(%q) made no file %s: %v", tc.url, tc.file, err)
		}
	}
}

// TestOpenDefault opens recon.db in the working directory (so not parallel).
func TestOpenDefault(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := sqlstore.Open(t.Context(), "")
	if err != nil {
		t.Fatalf("Open(\"\"): %v", err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, sqlstore.DefaultSQLitePath)); err != nil {
		t.Fatalf("no %s in the working directory: %v", sqlstore.DefaultSQLitePath, err)
	}
}

func TestOpenPostgresUnreachable(t *testing.T) {
	t.Parallel()
	// Port 1 on localhost: nothing listens there.
	_, err := sqlstore.Open(t.Context(), "postgres://nobody@127.0.0.1:1/recon?sslmode=disable&connect_timeout=5")
	if code := recon.ErrorCode(err); code != recon.EUNAVAILABLE {
		t.Fatalf("got error %v, want code %s", err, recon.EUNAVAILABLE)
	}
}

func TestEngine(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			if got := dbtest.OpenStore(t, engine).Engine(); got != engine {
				t.Fatalf("Engine() = %q, want %q", got, engine)
			}
		})
	}
}

// TestMigrateConcurrently runs Migrate from two handles (as two processes
// would) on one fresh database at once, then once more.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		const n = 4
		dbs := make([]*sqlstore.DB, n)
		for i := range dbs {
			db, err := sqlstore.Open(t.Context(), databaseURL)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i, db := range dbs {
			wg.Go(func() { errs[i] = db.Migrate(context.Background()) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Migrate %d: %v", i, err)
			}
		}
		if err := dbs[0].Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
		// Every version is recorded once.
		var rows, versions int
		err := dbs[0].SQL().QueryRowContext(t.Context(),
			`SELECT count(*), count(DISTINCT version_id) FROM goose_db_version`).Scan(&rows, &versions)
		if err != nil {
			t.Fatal(err)
		}
		if rows != versions {
			t.Fatalf("goose_db_version has %d rows for %d versions", rows, versions)
		}
		// And the schema works.
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := dbs[n-1].CreateCompany(t.Context(), c); err != nil {
			t.Fatalf("CreateCompany: %v", err)
		}
	})
}

func TestWithClock(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		now := time.Date(2025, 1, 2, 10, 4, 5, 123456789, time.FixedZone("ICT", 7*60*60))
		db, err := sqlstore.Open(t.Context(), dbtest.NewURL(t, engine), sqlstore.WithClock(testkit.NewClock(now)))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := db.CreateCompany(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		got, err := db.Company(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC) // UTC, to the microsecond
		if c.CreatedAt != want || got.CreatedAt != want {
			t.Fatalf("CreatedAt = %v, stored %v; want %v", c.CreatedAt, got.CreatedAt, want)
		}
	})
}
