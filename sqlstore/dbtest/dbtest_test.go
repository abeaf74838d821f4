package dbtest_test

import (
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// tables counts the tables of the database's default schema.
func tables(t *testing.T, db *sqlstore.DB) int {
	t.Helper()
	query := `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`
	if db.Engine() == sqlstore.EngineSQLite {
		query = `SELECT count(*) FROM sqlite_master WHERE type = 'table'`
	}
	var n int
	if err := db.SQL().QueryRowContext(t.Context(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNewURLIsFreshAndEmpty(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		a, b := dbtest.NewURL(t, engine), dbtest.NewURL(t, engine)
		if a == b {
			t.Fatalf("NewURL returned %s twice", a)
		}
		for _, u := range []string{a, b} {
			db, err := sqlstore.Open(t.Context(), u)
			if err != nil {
				t.Fatalf("Open(%s): %v", u, err)
			}
			defer db.Close()
			if db.Engine() != engine {
				t.Fatalf("Open(%s).Engine() = %s, want %s", u, db.Engine(), engine)
			}
			if n := tables(t, db); n != 0 {
				t.Fatalf("%s has %d tables, want none", u, n)
			}
		}
	})
}

func TestNewMigratedURLIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		a, b := dbtest.NewMigratedURL(t, engine), dbtest.NewMigratedURL(t, engine)
		if a == b {
			t.Fatalf("NewMigratedURL returned %s twice", a)
		}
		want := tables(t, dbtest.OpenStore(t, engine))
		var stores []*sqlstore.DB
		for _, u := range []string{a, b} {
			db, err := sqlstore.Open(t.Context(), u)
			if err != nil {
				t.Fatalf("Open(%s): %v", u, err)
			}
			defer db.Close()
			if n := tables(t, db); n == 0 || n != want {
				t.Fatalf("%s has %d tables, want the migrated %d", u, n, want)
			}
			stores = append(stores, dbtest.OpenURL(t, u))
		}
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := stores[0].CreateCompany(t.Context(), c); err != nil {
			t.Fatalf("CreateCompany: %v", err)
		}
		if _, err := stores[1].Company(t.Context(), c.ID); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("the other database's Company(%d): got error %v, want not found", c.ID, err)
		}
	})
}

func TestOpenStoreIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		a, b := dbtest.OpenStore(t, engine), dbtest.OpenStore(t, engine)
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}
		if err := a.CreateCompany(t.Context(), c); err != nil {
			t.Fatalf("CreateCompany: %v", err)
		}
		if _, err := b.Company(t.Context(), c.ID); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("the other store's Company(%d): got error %v, want not found", c.ID, err)
		}
	})
}

func TestDatabaseRemovedAtCleanup(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		var databaseURL string
		t.Run("use", func(t *testing.T) {
			databaseURL = dbtest.NewURL(t, engine)
			dbtest.OpenURL(t, databaseURL)
		})
		// SQLite would create the file again; its directory is gone, so Open fails.
		db, err := sqlstore.Open(t.Context(), databaseURL)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%s) after the test that made it: got nil error", databaseURL)
		}
	})
}
