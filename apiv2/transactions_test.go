package apiv2

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// syncPage is the data of a sync answer, decoded.
type syncPage struct {
	Added      []map[string]any `json:"added"`
	Modified   []map[string]any `json:"modified"`
	Removed    []int64          `json:"removed"`
	NextCursor string           `json:"next_cursor"`
	HasMore    bool             `json:"has_more"`
}

func getSync(t testing.TB, base, token, cursor string, count int) (int, syncPage, string) {
	t.Helper()
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if count > 0 {
		q.Set("count", fmt.Sprint(count))
	}
	status, _, body := send(t, "GET", base+"/v2/transactions/sync?"+q.Encode(), token, "")
	var env struct {
		Data syncPage `json:"data"`
	}
	if status == 200 {
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatalf("sync: %v: %s", err, body)
		}
	}
	return status, env.Data, body
}

func ids(items []map[string]any) []int64 {
	var out []int64
	for _, it := range items {
		out = append(out, int64(it["id"].(float64)))
	}
	return out
}

func account(t testing.TB, db *sqlstore.DB, tenant recon.TenantID, number string) int64 {
	t.Helper()
	b := &recon.BankAccount{CompanyID: tenant.ID(), BankName: "Vietcombank", AccountNumber: number}
	if err := db.CreateBankAccount(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return b.ID
}

func ingest(t testing.TB, db *sqlstore.DB, tenant recon.TenantID, account int64, refs ...string) []int64 {
	t.Helper()
	out, err := tryIngest(db, tenant, account, refs...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryIngest stores a batch of 100 000 VND transfers with the references
// refs ("CODE/ref": the memo names CODE), a second apart on 2 January 2026.
func tryIngest(db *sqlstore.DB, tenant recon.TenantID, account int64, refs ...string) ([]int64, error) {
	var in []recon.TransactionInput
	var codes []string
	for i, ref := range refs {
		code, _, _ := strings.Cut(ref, "/")
		in = append(in, recon.TransactionInput{BankAccountID: account, TransactionDate: time.Date(2026, 1, 2, 9, 0, i, 0, time.UTC),
			AmountIn: 100000, Content: "chuyen tien " + code, ReferenceNumber: ref})
		codes = append(codes, code)
	}
	res, err := db.IngestTransactions(context.Background(), tenant, in, codes)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, r := range res {
		out = append(out, r.ID)
	}
	return out, nil
}

// TestSyncTransactions checks GET /v2/transactions/sync on both engines
// (docs/api-v2.md, Transactions sync): ingested rows are added in commit
// order across pages; a manual resolution and a recode are modified, with
// the match state and code as they are now; retention's deletes are
// removed; a cursor older than the log's retention is 409 cursor_expired
// while no cursor starts over; the test mode's log is its own and a cursor
// works only for the tenant that got it; malformed input is 400.
func TestSyncTransactions(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		co, auth := company(t, db, "SM")
		_, srv := server(t, Config{Store: db, Auth: auth})
		live := co.Tenant()
		acct := account(t, db, live, "0071000123456")

		status, empty, body := getSync(t, srv.URL, "admin", "", 0)
		if status != 200 || len(empty.Added)+len(empty.Modified)+len(empty.Removed) != 0 || empty.HasMore || empty.NextCursor == "" {
			t.Fatalf("empty log: %d %s", status, body)
		}
		want := `{"status":"success","data":{"added":[],"modified":[],"removed":[],"next_cursor":"` + empty.NextCursor + `","has_more":false},"meta":{}}`
		if body != want {
			t.Errorf("empty log:\n%s\nwant\n%s", body, want)
		}
		order := &recon.Order{CompanyID: co.ID, InvoiceNumber: "INV-1", PaymentCode: "DH1111", Amount: 100000, BankAccountID: acct, Status: recon.OrderAwaitingPayment}
		if err := db.CreateOrder(ctx, order); err != nil {
			t.Fatal(err)
		}
		first := ingest(t, db, live, acct, "DH1111/a", "DH9999/b", "/c")
		second := ingest(t, db, live, acct, "/d", "DH1111/a") // a: a duplicate, not added again
		added := append(slices.Clone(first), second[0])

		status, p1, body := getSync(t, srv.URL, "admin", empty.NextCursor, 3)
		if status != 200 || !slices.Equal(ids(p1.Added), first) || !p1.HasMore || len(p1.Modified)+len(p1.Removed) != 0 {
			t.Fatalf("page 1: %d %s, want %v added and more", status, body, first)
		}
		if a := p1.Added[0]; a["match_outcome"] != "matched" || a["order_id"] != float64(order.ID) || a["exception"] != nil || a["code"] != "DH1111" ||
			a["amount_in"] != float64(100000) || a["livemode"] != true || a["transaction_date"] != "2026-01-02 09:00:00" {
			t.Errorf("a matched transfer: %v", a)
		}
		if b := p1.Added[1]; b["match_outcome"] != nil || b["order_id"] != nil || b["exception"] != "open" {
			t.Errorf("an unmatched transfer: %v", b)
		}
		status, p2, body := getSync(t, srv.URL, "admin", p1.NextCursor, 3)
		if status != 200 || !slices.Equal(ids(p2.Added), second[:1]) || p2.HasMore {
			t.Fatalf("page 2: %d %s, want %v added and no more", status, body, second[:1])
		}
		// Nothing new: the same cursor comes back.
		if status, p, body := getSync(t, srv.URL, "admin", p2.NextCursor, 0); status != 200 || p.NextCursor != p2.NextCursor || len(p.Added) != 0 || p.HasMore {
			t.Errorf("at the end: %d %s", status, body)
		}

		// Modified: a resolution, a recode.
		admin := &recon.User{ID: 1, Email: "a@sm.vn", Company: co.ID, Role: recon.RoleAdmin}
		if _, err := db.ResolveException(ctx, live, first[1], recon.ResolveInput{Action: recon.ResolveIgnore, Note: "a gift"}, admin, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RecodeTransactions(ctx, live, time.Time{}, func(memo string) string {
			if strings.HasSuffix(memo, " ") {
				return "NEW"
			}
			return strings.TrimPrefix(memo, "chuyen tien ")
		}); err != nil {
			t.Fatal(err)
		}
		status, p3, body := getSync(t, srv.URL, "admin", p2.NextCursor, 0)
		if status != 200 || len(p3.Added) != 0 || !slices.Equal(ids(p3.Modified), []int64{first[1], first[2], second[0]}) {
			t.Fatalf("modified: %d %s, want %v", status, body, []int64{first[1], first[2], second[0]})
		}
		if m := p3.Modified[0]; m["exception"] != "resolved" {
			t.Errorf("the resolved exception: %v", m)
		}
		if m := p3.Modified[1]; m["code"] != "NEW" {
			t.Errorf("the recoded transaction: %v", m)
		}

		// The test mode's log is its own; a cursor is its tenant's.
		test, err := db.TestTenant(ctx, co.ID)
		if err != nil {
			t.Fatal(err)
		}
		testAdded := ingest(t, db, test.ID, account(t, db, test.ID, "0071000123456"), "/t1")
		status, tp, body := getSync(t, srv.URL, "test", "", 0)
		if status != 200 || !slices.Equal(ids(tp.Added), testAdded) || tp.Added[0]["livemode"] != false || len(tp.Modified) != 0 {
			t.Errorf("test mode: %d %s, want only %v", status, body, testAdded)
		}
		// The test-data wipe removes them.
		if _, err := db.WipeTestData(ctx, co.ID); err != nil {
			t.Fatal(err)
		}
		if status, p, body := getSync(t, srv.URL, "test", tp.NextCursor, 0); status != 200 || !slices.Equal(p.Removed, testAdded) || len(p.Added) != 0 {
			t.Errorf("after the wipe: %d %s, want %v removed", status, body, testAdded)
		}
		// Another company sees nothing of these, and its cursor is its own.
		other, otherAuth := company(t, db, "Other")
		for k, v := range otherAuth {
			auth["other-"+k] = v
		}
		if status, p, body := getSync(t, srv.URL, "other-admin", "", 0); status != 200 || len(p.Added)+len(p.Modified)+len(p.Removed) != 0 {
			t.Errorf("another company (%d): %d %s, want nothing", other.ID, status, body)
		}
		auth["admin-of-other"] = otherAuth["admin"]
		tc := struct{ token, query, field string }{"admin-of-other", "cursor=" + p3.NextCursor, "cursor"}
		if status, _, body := send(t, "GET", srv.URL+"/v2/transactions/sync?"+tc.query, tc.token, ""); status != 400 || !strings.Contains(body, "another company or mode") {
			t.Errorf("another company's cursor: %d %s", status, body)
		}
		for _, tc := range []struct{ token, query, field string }{
			{"test", "cursor=" + p3.NextCursor, "cursor"},
			{"admin", "cursor=" + tp.NextCursor, "cursor"},
			{"admin", "cursor=not-a-cursor", "cursor"},
			{"admin", "cursor=AQ", "cursor"},
			{"admin", "count=0", "count"},
			{"admin", "count=501", "count"},
			{"admin", "count=x", "count"},
			{"admin", "page=2", "page"},
		} {
			status, _, body := send(t, "GET", srv.URL+"/v2/transactions/sync?"+tc.query, tc.token, "")
			if status != 400 || !strings.Contains(body, `"errors":{"`+tc.field+`":[`) {
				t.Errorf("%s %s: %d %s, want 400 naming %s", tc.token, tc.query, status, body, tc.field)
			}
		}

		// Removed: retention (30 days) deletes the rows of January.
		if _, err := db.UpdateCompany(ctx, co.ID, func(c *recon.Company) error { c.Config.DataStorageDays = 30; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ApplyRetention(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		status, p4, body := getSync(t, srv.URL, "admin", p3.NextCursor, 0)
		slices.Sort(p4.Removed) // retention deletes in no particular order
		if status != 200 || !slices.Equal(p4.Removed, added) || len(p4.Added)+len(p4.Modified) != 0 {
			t.Fatalf("removed: %d %s, want %v", status, body, added)
		}
		// From the start, what was added and is gone is not shown as added.
		if status, p, body := getSync(t, srv.URL, "admin", "", 0); status != 200 || len(p.Added)+len(p.Modified) != 0 || len(p.Removed) != len(added) {
			t.Errorf("from the start after retention: %d %s", status, body)
		}
		// Thirty days on, the log has dropped those changes: an old cursor
		// is expired; the last one and none still work.
		if _, err := db.ApplyRetention(ctx, time.Now().Add(31*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		want = `{"status":"error","error_code":"cursor_expired","message":"the cursor is older than the changes Recon keeps (the company's data_storage_time): sync again from the start, without a cursor"}`
		if status, _, body := getSync(t, srv.URL, "admin", p3.NextCursor, 0); status != 409 || body != want {
			t.Errorf("an expired cursor: %d %s\nwant 409 %s", status, body, want)
		}
		if status, p, body := getSync(t, srv.URL, "admin", p4.NextCursor, 0); status != 200 || len(p.Removed) != 0 {
			t.Errorf("the last cursor: %d %s", status, body)
		}
		if status, p, body := getSync(t, srv.URL, "admin", "", 0); status != 200 || len(p.Removed)+len(p.Added) != 0 || p.NextCursor != p4.NextCursor {
			t.Errorf("no cursor after the purge: %d %s, want an empty page at %s", status, body, p4.NextCursor)
		}
	})
}

// TestSyncUnderConcurrentIngestion pages through sync on PostgreSQL while
// many writers ingest into the same company, some sharing bank accounts
// (so their batches are group-committed) and some not (so they commit in
// parallel and in any order): at the end the reader has seen every row
// exactly once as added, and nothing else.
func TestSyncUnderConcurrentIngestion(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, "postgres")
	co, auth := company(t, db, "SM")
	_, srv := server(t, Config{Store: db, Auth: auth})
	var accounts []int64
	for i := range 4 {
		accounts = append(accounts, account(t, db, co.Tenant(), fmt.Sprint("00710001234", i)))
	}
	const writers, batches, rows = 8, 15, 7
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stored []int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for b := range batches {
				var refs []string
				for r := range rows {
					refs = append(refs, fmt.Sprintf("/w%d-b%d-r%d", w, b, r))
				}
				got, err := tryIngest(db, co.Tenant(), accounts[w%len(accounts)], refs...)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				stored = append(stored, got...)
				mu.Unlock()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	close(start)
	seen := map[int64]int{}
	cursor := ""
	finished := false
	for {
		select {
		case <-done:
			finished = true
		default:
		}
		status, p, body := getSync(t, srv.URL, "admin", cursor, 9)
		if status != 200 {
			t.Fatalf("sync: %d %s", status, body)
		}
		if len(p.Modified)+len(p.Removed) != 0 {
			t.Fatalf("sync: %s, want only added", body)
		}
		for _, id := range ids(p.Added) {
			seen[id]++
		}
		cursor = p.NextCursor
		// Read on until a page after the writers finished says no more.
		if finished && !p.HasMore {
			break
		}
	}
	if len(stored) != writers*batches*rows {
		t.Fatalf("%d rows stored, want %d", len(stored), writers*batches*rows)
	}
	for _, id := range stored {
		if seen[id] != 1 {
			t.Errorf("transaction %d seen %d times as added, want once", id, seen[id])
		}
	}
	if len(seen) != len(stored) {
		t.Errorf("%d transactions seen, %d stored", len(seen), len(stored))
	}
}
