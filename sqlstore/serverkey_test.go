package sqlstore_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestServerKey(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		db := dbtest.OpenURL(t, databaseURL)

		// Several processes ask at once: one key wins, everybody gets it.
		const n = 6
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			other, err := sqlstore.Open(t.Context(), databaseURL)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			wg.Go(func() { keys[i], errs[i] = other.ServerKey(t.Context(), "hmac", 32) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("ServerKey %d: %v", i, errs[i])
			}
			if len(keys[i]) != 32 || !bytes.Equal(keys[i], keys[0]) {
				t.Fatalf("ServerKey %d = %x, want the 32 bytes %x", i, keys[i], keys[0])
			}
		}
		again, err := db.ServerKey(t.Context(), "hmac", 32)
		if err != nil || !bytes.Equal(again, keys[0]) {
			t.Fatalf("ServerKey again = %x, %v; want %x", again, err, keys[0])
		}
		other, err := db.ServerKey(t.Context(), "other", 32)
		if err != nil || bytes.Equal(other, keys[0]) {
			t.Fatalf("ServerKey(other) = %x, %v; want another key", other, err)
		}
		if _, err := db.ServerKey(t.Context(), "hmac", 64); recon.ErrorCode(err) != recon.EINTERNAL {
			t.Fatalf("ServerKey with another size: got error %v, want an internal error", err)
		}
	})
}

func TestServerKeyRand(t *testing.T) {
	t.Parallel()
	db, err := sqlstore.Open(t.Context(), dbtest.NewURL(t, sqlstore.EngineSQLite), sqlstore.WithRand(strings.NewReader(strings.Repeat("k", 16))))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	key, err := db.ServerKey(t.Context(), "hmac", 16)
	if err != nil || string(key) != strings.Repeat("k", 16) {
		t.Fatalf("ServerKey = %q, %v; want the injected bytes", key, err)
	}
}

// TestHubXIDsComeFromRand: the hub's xids are drawn from the store's
// injected randomness (WithRand), so a test can fix them.
func TestHubXIDsComeFromRand(t *testing.T) {
	t.Parallel()
	var seq [16]byte
	for i := range seq {
		seq[i] = byte(i)
	}
	db, err := sqlstore.Open(t.Context(), dbtest.NewURL(t, sqlstore.EngineSQLite), sqlstore.WithRand(bytes.NewReader(seq[:])))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	co := &recon.Company{FullName: "Company 1 Ltd", ShortName: "c1", Status: recon.CompanyActive, Subscription: "standard",
		Config: recon.CompanyConfig{DataStorageDays: 30}}
	if err := db.CreateCompany(t.Context(), co); err != nil {
		t.Fatal(err)
	}
	c := &recon.HubCustomer{Tenant: co.Tenant(), FullName: "Công ty TNHH ABC", Status: recon.HubCustomerActive}
	if err := db.CreateHubCustomer(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if want := "00010203-0405-4607-8809-0a0b0c0d0e0f"; c.XID != want {
		t.Fatalf("customer xid %q, want %q (from the injected bytes)", c.XID, want)
	}
}

func TestEmpty(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		wantEmpty := func(want bool) {
			t.Helper()
			if got, err := db.Empty(t.Context()); err != nil || got != want {
				t.Fatalf("Empty() = %v, %v; want %v", got, err, want)
			}
		}
		wantEmpty(true)
		if _, err := db.ServerKey(t.Context(), "hmac", 32); err != nil {
			t.Fatal(err)
		}
		wantEmpty(true) // keys are not data
		if err := db.CreateCompany(t.Context(), &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive}); err != nil {
			t.Fatal(err)
		}
		wantEmpty(false)
	})
}
