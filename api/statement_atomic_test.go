package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"recon"
	"recon/api"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// csvRows returns a CSV statement of n incoming rows; bad, when set, rewrites row i (1-based data row).
func csvRows(n int, bad func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString("transaction_date,amount_in,transaction_content,reference_number,accumulated\n")
	for i := 1; i <= n; i++ {
		if bad != nil {
			if line := bad(i); line != "" {
				b.WriteString(line + "\n")
				continue
			}
		}
		fmt.Fprintf(&b, "2026-03-01 08:00:00,1000,chuyen tien %d,REF%d,\n", i, i)
	}
	return b.Bytes()
}

// TestUploadStatementAllOrNothing: an import stores every row or none,
// whatever fails and wherever, also past the first storage batch.
func TestUploadStatementAllOrNothing(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		acct := b.account(t, b.company.ID, "101234567890")
		path := fmt.Sprintf("/api/v1/bank-accounts/%d/statements?format=csv", acct)
		post := func(body []byte) (int, map[string]any) {
			t.Helper()
			return b.post(t, path, "text/csv", body)
		}
		stored := func() int64 {
			_, total, err := b.store.Transactions(t.Context(), b.company.Tenant(), recon.TransactionFilter{Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return total
		}
		row1202 := func(line string) func(int) string {
			return func(i int) string {
				if i == 1201 { // data row 1201 is line 1202 of the file
					return line
				}
				return ""
			}
		}
		for _, tt := range []struct {
			name, message string
			body          []byte
		}{
			{"NUL in a memo", "row 1202: transaction_content holds the control character U+0000", csvRows(1500, row1202("2026-03-01 08:00:00,1000,chuyen\x00tien,REF1201,"))},
			{"NUL in a reference", "row 1202: reference_number holds the control character U+0000", csvRows(1500, row1202("2026-03-01 08:00:00,1000,memo,REF\x001201,"))},
			{"running balance out of range", "row 1202: the running balance of bank account", csvRows(1500, row1202(fmt.Sprintf("2026-03-01 08:00:00,%d,memo,REF1201,", recon.MaxAmount-1)))},
			{"bad amount in the last row", "row 1501: amount_in", csvRows(1500, func(i int) string {
				if i == 1500 {
					return "2026-03-01 08:00:00,abc,memo,REF1500,"
				}
				return ""
			})},
		} {
			status, body := post(tt.body)
			if status != 400 || !strings.Contains(fmt.Sprint(body["message"]), tt.message) {
				t.Errorf("%s: %d %v, want 400 %q", tt.name, status, body, tt.message)
			}
			if n := stored(); n != 0 {
				t.Fatalf("%s: %d rows stored, want none", tt.name, n)
			}
		}
		// The same file, good: all of it.
		status, body := post(csvRows(1500, nil))
		if data, _ := body["data"].(map[string]any); status != 200 || data["imported"] != 1500.0 {
			t.Fatalf("good file: %d %v", status, body)
		}
		if n := stored(); n != 1500 {
			t.Fatalf("%d rows stored, want 1500", n)
		}
	})
}

// TestUploadStatementConcurrencyLimit: with every upload slot taken, one
// more upload is refused with 503 and Retry-After, and served again once a
// slot is free.
func TestUploadStatementConcurrencyLimit(t *testing.T) {
	db := dbtest.OpenStore(t, "sqlite")
	co := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive,
		Subscription: "Business", BeginDate: "2026-01-01", EndDate: "2027-01-01", Config: recon.CompanyConfig{DataStorageDays: 365}}
	if err := db.CreateCompany(t.Context(), co); err != nil {
		t.Fatal(err)
	}
	ba := &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: "101234567890"}
	if err := db.CreateBankAccount(t.Context(), ba); err != nil {
		t.Fatal(err)
	}
	auth := tokens{"feeder": {Tenant: recon.LiveTenant(co.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}}}
	mux := web.NewMux()
	blocking := &blockingStore{Store: db}
	(&api.Handler{Store: blocking, Auth: auth, Logger: slog.New(slog.DiscardHandler), Uploads: web.NewSlots(1, 1)}).Register(mux)
	srv := httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(srv.Close)
	path := fmt.Sprintf("%s/api/v1/bank-accounts/%d/statements?format=csv", srv.URL, ba.ID)
	upload := func(body io.Reader) (*http.Response, map[string]any) {
		req, _ := http.NewRequest("POST", path, body)
		req.Header.Set("Authorization", "Bearer feeder")
		req.Header.Set("Content-Type", "text/csv")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp, v
	}
	// A slow upload holds no slot while its body trickles in: with one slot,
	// another upload is imported meanwhile.
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // a failed test must not leave it open
	first := make(chan map[string]any, 1)
	go func() {
		resp, v := upload(pr)
		if resp.StatusCode != 200 {
			t.Errorf("slow upload: %d %v", resp.StatusCode, v)
		}
		first <- v
	}()
	file := csvRows(3, nil)
	if _, err := pw.Write(file[:40]); err != nil {
		t.Fatal(err)
	}
	if resp, v := upload(bytes.NewReader(csvRows(2, nil))); resp.StatusCode != 200 {
		t.Fatalf("upload while a slow one spools: %d %v", resp.StatusCode, v)
	}
	// An import holds the slot: while one is blocked in the database
	// transaction, another upload gets 503 with Retry-After.
	blocking.hold()
	imported := make(chan map[string]any, 1)
	go func() {
		_, v := upload(bytes.NewReader(csvRows(4, nil)))
		imported <- v
	}()
	<-blocking.entered
	resp, v := upload(bytes.NewReader(csvRows(1, nil)))
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(fmt.Sprint(v["message"]), "too many statement uploads") {
		t.Fatalf("while an import runs: %d %v %v", resp.StatusCode, resp.Header, v)
	}
	blocking.free()
	if v := <-imported; v["data"] == nil {
		t.Fatalf("the blocked import: %v", v)
	}
	pw.Write(file[40:])
	pw.Close()
	if v := <-first; v["data"].(map[string]any)["imported"] == nil {
		t.Fatalf("slow upload: %v", v)
	}
}

// blockingStore is the real store whose IngestAtomically can be held at its
// start, to keep an import running while a test looks at the server.
type blockingStore struct {
	api.Store
	mu      sync.Mutex
	held    bool
	entered chan struct{}
	release chan struct{}
}

func (s *blockingStore) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.entered, s.release = true, make(chan struct{}), make(chan struct{})
}

func (s *blockingStore) free() { close(s.release) }

func (s *blockingStore) IngestAtomically(ctx context.Context, tenant recon.TenantID, fill func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error) error {
	s.mu.Lock()
	held, entered, release := s.held, s.entered, s.release
	s.held = false
	s.mu.Unlock()
	if held {
		close(entered)
		<-release
	}
	return s.Store.IngestAtomically(ctx, tenant, fill)
}

// TestUploadStatementWithADeadDatabase: an import whose database is gone is
// a 500 with no detail, and the spooled copy of the file is removed.
func TestUploadStatementWithADeadDatabase(t *testing.T) {
	db := dbtest.OpenStore(t, "sqlite")
	co := &recon.Company{FullName: "Sao Mai", ShortName: "SM", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), co); err != nil {
		t.Fatal(err)
	}
	auth := tokens{"feeder": {Tenant: recon.LiveTenant(co.ID), ClientID: "c", Scopes: []string{recon.ScopeTransactionWrite}}}
	spool := t.TempDir()
	mux := web.NewMux()
	(&api.Handler{Store: db, Auth: auth, Logger: slog.New(slog.DiscardHandler), TempDir: spool}).Register(mux)
	srv := httptest.NewServer((&web.Middleware{Logger: slog.New(slog.DiscardHandler)}).Wrap(mux))
	t.Cleanup(srv.Close)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/v1/bank-accounts/1/statements?format=csv", bytes.NewReader(csvRows(3, nil)))
	req.Header.Set("Authorization", "Bearer feeder")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || !strings.Contains(string(raw), "An internal error occurred.") || strings.Contains(string(raw), "closed") {
		t.Fatalf("upload with a dead database: %d %s", resp.StatusCode, raw)
	}
	if left, _ := os.ReadDir(spool); len(left) != 0 {
		t.Fatalf("the spooled file was left behind: %v", left)
	}
}
