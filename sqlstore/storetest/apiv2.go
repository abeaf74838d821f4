package storetest

import (
	"errors"
	"testing"
	"time"

	"recon"
)

// testIdempotency checks recon.IdempotencyStore (docs/api-v2.md,
// Idempotency): the claim's states, release, the lease, expiry and the
// purge, per tenant.
func testIdempotency(t *testing.T, open Open) {
	run(t, "Claims", open, testIdempotencyClaims)
	run(t, "LeaseAndExpiry", open, testIdempotencyLeaseAndExpiry)
}

func idempotencyStore(t *testing.T, s recon.Store) recon.IdempotencyStore {
	return storeAs[recon.IdempotencyStore](t, s)
}

func claim(t *testing.T, st recon.IdempotencyStore, tenant recon.TenantID, c recon.IdempotencyClaim, now time.Time) (recon.IdempotencyState, *recon.IdempotentAnswer) {
	t.Helper()
	state, a, err := st.ClaimIdempotencyKey(t.Context(), tenant, c, now, time.Minute)
	if err != nil {
		t.Fatalf("ClaimIdempotencyKey %+v: %v", c, err)
	}
	return state, a
}

func testIdempotencyClaims(t *testing.T, s recon.Store) {
	st := idempotencyStore(t, s)
	c := newCompany(t, s, 1)
	other := newCompany(t, s, 2)
	test := testTenant(t, s, c.ID).ID
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	first := recon.IdempotencyClaim{Key: "k", Route: "POST /v2/orders", BodyHash: "h1", Token: "t1"}
	if state, _ := claim(t, st, c.Tenant(), first, now); state != recon.IdempotencyClaimed {
		t.Fatalf("first claim: %v", state)
	}
	same := first
	same.Token = "t2"
	if state, _ := claim(t, st, c.Tenant(), same, now); state != recon.IdempotencyRunning {
		t.Errorf("while running: %v, want running", state)
	}
	for _, m := range []recon.IdempotencyClaim{
		{Key: "k", Route: "POST /v2/orders", BodyHash: "h2", Token: "t3"},
		{Key: "k", Route: "POST /v2/refunds", BodyHash: "h1", Token: "t3"},
	} {
		if state, _ := claim(t, st, c.Tenant(), m, now); state != recon.IdempotencyMismatch {
			t.Errorf("%+v: %v, want mismatch", m, state)
		}
	}
	// Another tenant's key of the same name is its own.
	for _, tenant := range []recon.TenantID{other.Tenant(), test} {
		if state, _ := claim(t, st, tenant, same, now); state != recon.IdempotencyClaimed {
			t.Errorf("tenant %v: %v, want claimed", tenant, state)
		}
	}
	// Only the claimer finishes.
	answer := recon.IdempotentAnswer{Status: 201, Body: []byte(`{"status":"success"}`)}
	if err := st.FinishIdempotencyKey(t.Context(), c.Tenant(), same, answer, nil); recon.ErrorCode(err) != recon.ECONFLICT {
		t.Errorf("Finish by another token: %v, want conflict", err)
	}
	expires := now.Add(recon.IdempotencyKeyTTL)
	if err := st.FinishIdempotencyKey(t.Context(), c.Tenant(), first, answer, &expires); err != nil {
		t.Fatal(err)
	}
	state, got := claim(t, st, c.Tenant(), same, now)
	if state != recon.IdempotencyDone || got == nil || got.Status != 201 || string(got.Body) != string(answer.Body) {
		t.Errorf("after finish: %v %+v, want done with the answer", state, got)
	}
	// A released claim leaves the key free; a release by another token does nothing.
	r := recon.IdempotencyClaim{Key: "r", Route: "POST /v2/orders", BodyHash: "h", Token: "t1"}
	claim(t, st, c.Tenant(), r, now)
	if err := st.ReleaseIdempotencyKey(t.Context(), c.Tenant(), recon.IdempotencyClaim{Key: "r", Token: "t9"}); err != nil {
		t.Fatal(err)
	}
	if state, _ := claim(t, st, c.Tenant(), recon.IdempotencyClaim{Key: "r", Route: "POST /v2/orders", BodyHash: "h", Token: "t2"}, now); state != recon.IdempotencyRunning {
		t.Errorf("after another token's release: %v, want running", state)
	}
	if err := st.ReleaseIdempotencyKey(t.Context(), c.Tenant(), r); err != nil {
		t.Fatal(err)
	}
	if state, _ := claim(t, st, c.Tenant(), recon.IdempotencyClaim{Key: "r", Route: "POST /v2/orders", BodyHash: "other", Token: "t2"}, now); state != recon.IdempotencyClaimed {
		t.Errorf("after the release: %v, want claimed (any body)", state)
	}
}

func testIdempotencyLeaseAndExpiry(t *testing.T, s recon.Store) {
	st := idempotencyStore(t, s)
	c := newCompany(t, s, 1)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	dead := recon.IdempotencyClaim{Key: "k", Route: "POST /v2/orders", BodyHash: "h", Token: "dead"}
	claim(t, st, c.Tenant(), dead, now)
	next := dead
	next.Token = "next"
	if state, _ := claim(t, st, c.Tenant(), next, now.Add(time.Minute-time.Microsecond)); state != recon.IdempotencyRunning {
		t.Errorf("within the lease: %v, want running", state)
	}
	if state, _ := claim(t, st, c.Tenant(), next, now.Add(time.Minute)); state != recon.IdempotencyClaimed {
		t.Fatalf("after the lease: %v, want claimed", state)
	}
	if err := st.FinishIdempotencyKey(t.Context(), c.Tenant(), dead, recon.IdempotentAnswer{Status: 500}, nil); recon.ErrorCode(err) != recon.ECONFLICT {
		t.Errorf("the dead claim's finish: %v, want conflict", err)
	}
	expires := now.Add(time.Hour)
	if err := st.FinishIdempotencyKey(t.Context(), c.Tenant(), next, recon.IdempotentAnswer{Status: 200, Body: []byte("{}")}, &expires); err != nil {
		t.Fatal(err)
	}
	kept := recon.IdempotencyClaim{Key: "kept", Route: "POST /v2/refunds", BodyHash: "h", Token: "t"}
	claim(t, st, c.Tenant(), kept, now)
	if err := st.FinishIdempotencyKey(t.Context(), c.Tenant(), kept, recon.IdempotentAnswer{Status: 201, Body: []byte("{}")}, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := st.DeleteExpiredIdempotencyKeys(t.Context(), now.Add(time.Hour-time.Microsecond)); err != nil || n != 0 {
		t.Errorf("purge before expiry: %d %v", n, err)
	}
	// Expired but not yet purged: free again, for any body.
	other := recon.IdempotencyClaim{Key: "k", Route: "POST /v2/orders", BodyHash: "other", Token: "x"}
	if state, _ := claim(t, st, c.Tenant(), other, now.Add(time.Hour)); state != recon.IdempotencyClaimed {
		t.Errorf("expired key: %v, want claimed", state)
	}
	if n, err := st.DeleteExpiredIdempotencyKeys(t.Context(), now.Add(recon.IdempotencyKeyTTL+time.Hour)); err != nil || n != 1 {
		t.Errorf("purge a day later: %d %v, want 1 (the reclaimed key; the kept one stays)", n, err)
	}
	if state, _ := claim(t, st, c.Tenant(), kept, now.Add(10*365*24*time.Hour)); state != recon.IdempotencyDone {
		t.Errorf("a kept key ten years on: %v, want done", state)
	}
}

// testSync checks recon.SyncStore's log (docs/api-v2.md, Transactions
// sync) at the storage level: commit order across the ways in, statement
// imports stamped once at their commit, nothing logged by a rollback, and
// paging.
func testSync(t *testing.T, open Open) {
	run(t, "AtomicImports", open, testSyncAtomicImports)
}

func changes(t *testing.T, s recon.Store, tenant recon.TenantID, after int64, limit int) *recon.TransactionChanges {
	t.Helper()
	page, err := storeAs[recon.SyncStore](t, s).TransactionChanges(t.Context(), tenant, after, limit)
	if err != nil {
		t.Fatalf("TransactionChanges(%d, %d): %v", after, limit, err)
	}
	return page
}

func testSyncAtomicImports(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	a := newAccount(t, s, c.ID, "111")
	atomic := storeAs[recon.AtomicIngestStore](t, s)
	// A failed import logs nothing and leaves no hole in the numbers.
	boom := errors.New("the file ends early")
	err := atomic.IngestAtomically(t.Context(), c.Tenant(), func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		if _, err := ingest([]recon.TransactionInput{tx(a.ID, "X1", "2026-05-01 09:00:00", 1000, 0)}, []string{""}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("IngestAtomically: %v", err)
	}
	if page := changes(t, s, c.Tenant(), -1, 10); len(page.Changes) != 0 || page.Next != 0 {
		t.Fatalf("after a rollback: %+v", page)
	}
	var want []int64
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{tx(a.ID, "P1", "2026-05-01 08:00:00", 1000, 0)}, []string{""})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, res[0].ID)
	err = atomic.IngestAtomically(t.Context(), c.Tenant(), func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		for _, batch := range [][]recon.TransactionInput{
			{tx(a.ID, "S1", "2026-05-01 09:00:00", 1000, 0), tx(a.ID, "S2", "2026-05-01 09:00:01", 0, 500)},
			{tx(a.ID, "S3", "2026-05-01 09:00:02", 1000, 0), tx(a.ID, "P1", "2026-05-01 08:00:00", 1000, 0)}, // P1: a duplicate
		} {
			res, err := ingest(batch, make([]string, len(batch)))
			if err != nil {
				return err
			}
			for _, r := range res {
				if !r.Duplicate {
					want = append(want, r.ID)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var seqs []int64
	after := int64(-1)
	for {
		page := changes(t, s, c.Tenant(), after, 2)
		for _, ch := range page.Changes {
			if ch.Kind != recon.ChangeAdded || ch.Transaction == nil || ch.Transaction.ID != ch.TransactionID {
				t.Errorf("change %+v, want an added transaction", ch)
			}
			got, seqs = append(got, ch.TransactionID), append(seqs, ch.Seq)
		}
		after = page.Next
		if !page.HasMore {
			break
		}
	}
	diff(t, "added, in commit order", want, got)
	diff(t, "numbers, without holes", []int64{1, 2, 3, 4}, seqs)
	// Another tenant's log is its own.
	if page := changes(t, s, testTenant(t, s, c.ID).ID, -1, 10); len(page.Changes) != 0 {
		t.Errorf("the test tenant's log: %+v", page)
	}
}
