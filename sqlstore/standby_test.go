package sqlstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// listed returns the references of the tenant's transactions as the
// listing reads them (its page and its total, which must agree), through
// ctx: recon.Listing's or not.
func listed(t *testing.T, ctx context.Context, db *sqlstore.DB, tenant recon.TenantID) map[string]bool {
	t.Helper()
	list, total, err := db.Transactions(ctx, tenant, recon.TransactionFilter{Page: 1, Limit: 100})
	if err != nil {
		t.Fatalf("Transactions: %v", err)
	}
	if int(total) != len(list) {
		t.Fatalf("Transactions: total %d, %d rows", total, len(list))
	}
	refs := map[string]bool{}
	for _, tr := range list {
		refs[tr.ReferenceNumber] = true
	}
	return refs
}

func standbyOf(t *testing.T, db *sqlstore.DB) sqlstore.StandbyStatus {
	t.Helper()
	st, ok := db.Standby()
	if !ok {
		t.Fatal("Standby: the store has none")
	}
	return st
}

// TestStandbyReads runs two nodes' stores on one primary and its streaming
// standby (docs/design.md, "Reads from a standby"): patient, whose bound is
// an hour and whose read URL names both nodes, and strict, whose bound is
// 100 ms. What a listing saw tells
// where it read: a transfer stored while the standby's replay is paused is
// on the primary only.
func TestStandbyReads(t *testing.T) {
	t.Parallel()
	r := dbtest.NewReplica(t)
	// patient names both nodes, as docs/design.md, "Reads from a standby"
	// suggests: prefer-standby passes over the primary.
	primary, _ := url.Parse(r.PrimaryURL)
	standby, _ := url.Parse(r.StandbyURL)
	both := *primary
	both.Host += "," + standby.Host
	both.RawQuery += "&target_session_attrs=prefer-standby"
	patient := dbtest.OpenURL(t, r.PrimaryURL, sqlstore.WithStandby(both.String(), time.Hour))
	strict := r.OpenStore(t, 100*time.Millisecond)
	ctx := t.Context()
	listing := recon.Listing(ctx)
	c := &recon.Company{FullName: "Standby Ltd", ShortName: "sb", Status: recon.CompanyActive}
	if err := patient.CreateCompany(ctx, c); err != nil {
		t.Fatal(err)
	}
	a := &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "111"}
	if err := patient.CreateBankAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	ingest := func(ref string) {
		t.Helper()
		in := []recon.TransactionInput{{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC),
			AmountIn: 1000, Content: "chuyen tien", ReferenceNumber: ref}}
		if _, err := patient.IngestTransactions(ctx, c.Tenant(), in, []string{""}); err != nil {
			t.Fatal(err)
		}
	}
	// servedFresh waits until db's listing reads the standby and sees ref.
	servedFresh := func(db *sqlstore.DB, name, ref string) {
		t.Helper()
		testkit.WaitFor(t, name+"'s listing read from the standby with "+ref, 30*time.Second, func() bool {
			before := standbyOf(t, db).Reads
			return listed(t, listing, db, c.Tenant())[ref] && standbyOf(t, db).Reads > before
		})
	}

	ingest("T1")
	r.WaitReplayed(t)
	servedFresh(patient, "patient", "T1")
	servedFresh(strict, "strict", "T1")
	if st := standbyOf(t, strict); st.Staleness < 0 || st.MaxLag != 100*time.Millisecond {
		t.Fatalf("strict's standby: %+v, want a known staleness and the bound", st)
	}
	// A read that is not a listing's reads the primary.
	before := standbyOf(t, patient).Reads
	if !listed(t, ctx, patient, c.Tenant())["T1"] || standbyOf(t, patient).Reads != before {
		t.Fatal("a read without recon.Listing went to the standby")
	}

	t.Run("replay paused", func(t *testing.T) {
		r.PauseReplay(t)
		ingest("T2")
		// Within an hour's bound the standby still serves: T2 is missing
		// from the listing until it replays, and only from the listing.
		if refs := listed(t, listing, patient, c.Tenant()); !refs["T1"] || refs["T2"] {
			t.Fatalf("patient's listing with the standby paused: %v, want T1 and not T2", refs)
		}
		if refs := listed(t, ctx, patient, c.Tenant()); !refs["T2"] {
			t.Fatalf("patient's read of the primary: %v, want T2", refs)
		}
		// Past 100 ms behind the primary, strict reads the primary.
		testkit.WaitFor(t, "strict's listing to fall back to the primary", 30*time.Second, func() bool {
			return listed(t, listing, strict, c.Tenant())["T2"]
		})
		if st := standbyOf(t, strict); st.Serving || st.Reason != "behind the primary" || st.Staleness <= st.MaxLag {
			t.Fatalf("strict's standby while paused: %+v, want not serving, behind the primary", st)
		}
		r.ResumeReplay(t)
		r.WaitReplayed(t)
		servedFresh(strict, "strict", "T2")
		servedFresh(patient, "patient", "T2")
	})

	t.Run("standby stopped", func(t *testing.T) {
		// patient's checker stops first: it still counts the standby fresh
		// when its listing meets the standby dead, and reads the primary.
		patient.StopStandbyChecks()
		r.StopStandby(t)
		ingest("T3")
		if refs := listed(t, listing, patient, c.Tenant()); !refs["T3"] {
			t.Fatalf("patient's listing with the standby stopped: %v, want T3", refs)
		}
		if st := standbyOf(t, patient); st.Serving || st.Reason != "failed a listing" {
			t.Fatalf("patient's standby after a failed listing: %+v, want not serving, failed a listing", st)
		}
		// strict's checker finds it dead.
		testkit.WaitFor(t, "strict's checker to find the standby unreachable", 30*time.Second, func() bool {
			return standbyOf(t, strict).Reason == "unreachable"
		})
		if st := standbyOf(t, strict); st.Serving || st.Staleness >= 0 {
			t.Fatalf("strict's standby once stopped: %+v, want not serving, staleness unknown", st)
		}
		if refs := listed(t, listing, strict, c.Tenant()); !refs["T3"] {
			t.Fatalf("strict's listing with the standby stopped: %v, want T3", refs)
		}
	})
}

// TestStandbyRefused: the read URL is refused at Open on SQLite and when
// it is not a PostgreSQL URL; a standby that does not answer, or a server
// that is not in recovery, is accepted and never read from.
func TestStandbyRefused(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		open := func(readURL string) (*sqlstore.DB, error) {
			db, err := sqlstore.Open(t.Context(), databaseURL, sqlstore.WithStandby(readURL, time.Second))
			if err == nil {
				t.Cleanup(func() { db.Close() })
			}
			return db, err
		}
		refused := func(readURL, want string) {
			t.Helper()
			_, err := open(readURL)
			if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), want) ||
				!hasField(err, "database_read_url") {
				t.Fatalf("Open with the read URL %q: %v, want EINVALID of database_read_url saying %q", readURL, err, want)
			}
		}
		if engine == sqlstore.EngineSQLite {
			refused("postgres://postgres@127.0.0.1:1/recon", "needs PostgreSQL: the database is sqlite")
			return
		}
		refused("sqlite:replica.db", "must be a PostgreSQL URL")
		refused("mysql://u:secret@h/db", `"mysql://u:xxxxx@h/db" must be a PostgreSQL URL`)
		refused("postgres://u:secret@h:port/db", "the read URL is not a valid PostgreSQL URL: cannot parse `postgres://u:xxxxx@h:port/db`: invalid port")

		db, err := open("postgres://postgres@127.0.0.1:1/recon?connect_timeout=2")
		if err != nil {
			t.Fatalf("Open with a standby that does not answer: %v", err)
		}
		if st := standbyOf(t, db); st.Serving || st.Reason != "unreachable" {
			t.Fatalf("a standby that does not answer: %+v, want not serving, unreachable", st)
		}
		// The primary itself as the read URL: not in recovery.
		db, err = open(databaseURL)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Transactions(recon.Listing(t.Context()), recon.LiveTenant(1), recon.TransactionFilter{Page: 1, Limit: 20}); err != nil {
			t.Fatalf("a listing: %v", err)
		}
		if st := standbyOf(t, db); st.Serving || st.Reason != "not in recovery" || st.Reads != 0 {
			t.Fatalf("a primary as the standby: %+v, want not serving, not in recovery, no reads", st)
		}
	})
}

// hasField reports whether err is a *recon.Error naming field.
func hasField(err error, field string) bool {
	var e *recon.Error
	return errors.As(err, &e) && e.Fields[field] != nil
}
