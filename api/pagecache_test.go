package api_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/api"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// pageReads counts the pages the handler reads from the store (a request
// answered from a kept page reads only the version) and, while down is
// set, answers as an unreachable database.
type pageReads struct {
	api.Store
	n    *atomic.Int64
	down *atomic.Bool
}

func (s pageReads) TransactionsIfChanged(ctx context.Context, tenant recon.TenantID, f recon.TransactionFilter, known int64) ([]*recon.Transaction, int64, int64, error) {
	if s.down.Load() {
		return nil, 0, 0, recon.Errorf(recon.EUNAVAILABLE, "the database is not reachable")
	}
	list, total, version, err := s.Store.TransactionsIfChanged(ctx, tenant, f, known)
	if err == nil && version != known {
		s.n.Add(1)
	}
	return list, total, version, err
}

// TestKeptPages checks the listing's kept pages from outside: an identical
// request is answered without reading the page, the same bytes and
// headers; two companies at the same version each get their own; and a
// write this handler never saw (another node's, the store's directly) is
// in the very next answer.
func TestKeptPages(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		var reads atomic.Int64
		var down atomic.Bool
		b := setup(t, engine, func(h *api.Handler) { h.Store = pageReads{h.Store, &reads, &down} })
		acct, otherAcct := b.account(t, b.company.ID, "0071000123456"), b.account(t, b.other.ID, "999")
		push := func(tenant recon.TenantID, account int64, refs ...string) {
			t.Helper()
			in := make([]recon.TransactionInput, len(refs))
			for i, ref := range refs {
				in[i] = recon.TransactionInput{BankAccountID: account, ReferenceNumber: ref, AmountIn: 1000,
					TransactionDate: time.Date(2026, 3, 1+i, 8, 0, 0, 0, time.UTC), Content: "chuyen tien " + ref}
			}
			if _, err := b.store.IngestTransactions(t.Context(), tenant, in, make([]string, len(in))); err != nil {
				t.Fatal(err)
			}
		}
		get := func(token, query string, wantReads int64) []byte {
			t.Helper()
			status, h, raw := testkit.Send(t, "GET", b.srv.URL+"/api/v1/transactions?"+query, testkit.Bearer(token), "", "")
			if status != 200 || h.Get("Content-Type") != "application/json; charset=utf-8" || h.Get("Cache-Control") != "no-store" {
				t.Fatalf("%s %s: %d %v %s", token, query, status, h, raw)
			}
			if n := reads.Load(); n != wantReads {
				t.Fatalf("%s %s: %d pages read, want %d", token, query, n, wantReads)
			}
			return raw
		}
		// Two changes each: both companies at the same version.
		push(recon.LiveTenant(b.company.ID), acct, "A1", "A2")
		push(recon.LiveTenant(b.other.ID), otherAcct, "B1", "B2")
		first := get("viewer", "limit=20", 1)
		if !bytes.Contains(first, []byte(`"A2"`)) || !bytes.Contains(first, []byte(`"total":2`)) {
			t.Fatalf("first page: %s", first)
		}
		if again := get("viewer", "limit=20", 1); !bytes.Equal(again, first) {
			t.Fatalf("kept page %s, first %s", again, first)
		}
		if other := get("other-viewer", "limit=20", 2); bytes.Contains(other, []byte(`"A1"`)) || !bytes.Contains(other, []byte(`"B1"`)) {
			t.Fatalf("the other company's page: %s", other)
		}
		get("viewer", "limit=1", 3) // another filter, another page
		get("viewer", "limit=20&page=1", 3)
		// A write this handler did not make.
		push(recon.LiveTenant(b.company.ID), acct, "A3")
		if after := get("viewer", "limit=20", 4); !bytes.Contains(after, []byte(`"A3"`)) || !bytes.Contains(after, []byte(`"total":3`)) {
			t.Fatalf("page after a write: %s", after)
		}
		// A write through this handler: the same.
		status, _, raw := testkit.Send(t, "POST", b.srv.URL+"/api/v1/transactions", testkit.Bearer("feeder"), "application/json",
			strings.ReplaceAll(`{"transactions":[{"bank_account_id":ACCT,"transaction_date":"2026-03-09 08:00:00","amount_in":5,"reference_number":"A4"}]}`, "ACCT", fmt.Sprint(acct)))
		if status != 200 {
			t.Fatalf("push: %d %s", status, raw)
		}
		kept := get("viewer", "limit=1", 5)
		if !bytes.Contains(kept, []byte(`"A4"`)) {
			t.Fatalf("page after a push: %s", kept)
		}
		// A database that does not answer: no kept page is served unchecked.
		down.Store(true)
		if status, _, raw := testkit.Send(t, "GET", b.srv.URL+"/api/v1/transactions?limit=1", testkit.Bearer("viewer"), "", ""); status != 503 || bytes.Contains(raw, []byte(`"A4"`)) {
			t.Fatalf("database down: %d %s, want 503 without the kept page", status, raw)
		}
		down.Store(false)
		if again := get("viewer", "limit=1", 5); !bytes.Equal(again, kept) {
			t.Fatalf("back up: %s, want the kept page %s", again, kept)
		}
	})
}

// neverVersioned fails the test when the handler asks for a page's version.
type neverVersioned struct {
	api.Store
	t *testing.T
}

func (s neverVersioned) TransactionsIfChanged(context.Context, recon.TenantID, recon.TransactionFilter, int64) ([]*recon.Transaction, int64, int64, error) {
	s.t.Error("TransactionsIfChanged called with no pages kept")
	return nil, 0, 0, recon.Errorf(recon.EINTERNAL, "not expected")
}

// TestNoKeptPages: with no pages kept (--listing-cache-mb 0) a listing
// reads its page alone, never the version, and shows each write.
func TestNoKeptPages(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine, func(h *api.Handler) { h.PageCacheBytes, h.Store = 0, neverVersioned{h.Store, t} })
		acct := b.account(t, b.company.ID, "0071000123456")
		for i, ref := range []string{"N1", "N2"} {
			in := []recon.TransactionInput{{BankAccountID: acct, ReferenceNumber: ref, AmountIn: 1000, TransactionDate: time.Date(2026, 3, 1+i, 8, 0, 0, 0, time.UTC)}}
			if _, err := b.store.IngestTransactions(t.Context(), recon.LiveTenant(b.company.ID), in, []string{""}); err != nil {
				t.Fatal(err)
			}
			status, _, raw := testkit.Send(t, "GET", b.srv.URL+"/api/v1/transactions?limit=1", testkit.Bearer("viewer"), "", "")
			if status != 200 || !bytes.Contains(raw, []byte(`"`+ref+`"`)) {
				t.Fatalf("after %s: %d %s", ref, status, raw)
			}
		}
	})
}
