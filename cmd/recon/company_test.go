package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// cliJSONList runs a command with --json that prints a JSON array.
func cliJSONList(t testing.TB, databaseURL string, args ...string) []map[string]any {
	t.Helper()
	out, err := cli(t, databaseURL, append(args, "--json")...)
	if err != nil {
		t.Fatalf("recon %s: %v", strings.Join(args, " "), err)
	}
	var v []map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("recon %s --json printed %q: %v", strings.Join(args, " "), out, err)
	}
	return v
}

func TestCompanyCommands(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	a := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty A", "--short-name", "A",
		"--begin-date", "2026-01-01", "--end-date", "2026-12-31", "--data-storage-time", "30")["id"])
	b := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty B", "--short-name", "B",
		"--begin-date", "2026-01-01", "--data-storage-days", "0", "--paycode=false")["id"])

	// list: every company, formats left out.
	list := cliJSONList(t, dbURL, "company", "list")
	if len(list) != 2 || fmt.Sprint(list[0]["id"]) != a || fmt.Sprint(list[1]["id"]) != b {
		t.Fatalf("list: %v", list)
	}
	cfg := list[0]["configurations"].(map[string]any)
	if cfg["data_storage_time"] != "30" || cfg["paycode"] != true || cfg["payment_code_formats"] != nil || list[0]["status"] != "active" {
		t.Fatalf("list[0]: %v", list[0])
	}
	if list[1]["configurations"].(map[string]any)["data_storage_time"] != "0" {
		t.Fatalf("list[1]: %v", list[1])
	}
	out, err := cli(t, dbURL, "company", "list")
	if err != nil || !strings.Contains(out, "SHORT NAME") || !strings.Contains(out, "30 days") || !strings.Contains(out, "0 (kept forever)") {
		t.Fatalf("list (text): %v\n%s", err, out)
	}

	// update with flags: only the given fields change.
	got := cliJSON(t, dbURL, "company", "update", a, "--status", "inactive", "--paycode=false", "--data-storage-time", "90", "--bank-sub-account")
	want := map[string]any{
		"id": got["id"], "full_name": "Công ty A", "short_name": "A", "status": "inactive", "subscription": "Standard",
		"begin_date": "2026-01-01", "end_date": "2026-12-31", "created_at": got["created_at"],
		"configurations": map[string]any{"bank_sub_account": true, "paycode": false, "data_storage_time": "90", "payment_code_formats": []any{}},
		"seller":         map[string]any{"legal_name": "", "tax_code": "", "address": "", "phone": "", "email": "", "bank_name": "", "bank_account": ""},
		"invoicing":      map[string]any{"invoice_template": "1", "invoice_series": "", "auto_invoice": false},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("update:\n got %v\nwant %v", got, want)
	}
	if shown := cliJSON(t, dbURL, "company", "show", a); fmt.Sprint(shown) != fmt.Sprint(want) {
		t.Fatalf("show after update:\n got %v\nwant %v", shown, want)
	}
	// update with --from-json: data_storage_time as the API renders it or as a number.
	got = cliJSON(t, dbURL, "company", "update", a, "--from-json", `{"status":"active","subscription":"Premium","data_storage_time":"7","end_date":""}`)
	if got["status"] != "active" || got["subscription"] != "Premium" || got["end_date"] != "" ||
		got["configurations"].(map[string]any)["data_storage_time"] != "7" || got["configurations"].(map[string]any)["bank_sub_account"] != true {
		t.Fatalf("update --from-json: %v", got)
	}
	got = cliJSON(t, dbURL, "company", "update", a, "--from-json", `{"data_storage_time":14}`)
	if got["configurations"].(map[string]any)["data_storage_time"] != "14" {
		t.Fatalf("update --from-json number: %v", got)
	}
	// The other company is untouched.
	if other := cliJSON(t, dbURL, "company", "show", b); other["status"] != "active" || other["subscription"] != "Standard" ||
		other["configurations"].(map[string]any)["paycode"] != false {
		t.Fatalf("other company: %v", other)
	}
	out, err = cli(t, dbURL, "company", "show", a)
	if err != nil || !strings.Contains(out, "data_storage_time:     14 days") || !strings.Contains(out, "subscription:          Premium") {
		t.Fatalf("show (text): %v\n%s", err, out)
	}

	// Refusals change nothing.
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"company", "update", a}, "nothing to change: give at least one field flag (see --help) or --from-json"},
		{[]string{"company", "update", a, "--status", "paused"}, `status must be "active" or "inactive"`},
		{[]string{"company", "update", a, "--data-storage-time", "-1"}, "data_storage_time must be a number of days from 0 (keep forever) to 36500"},
		{[]string{"company", "update", a, "--begin-date", "2027-01-01", "--end-date", "2026-01-01"}, "end_date must not be before begin_date"},
		{[]string{"company", "update", a, "--end-date", "31/12/2026"}, "end_date must be a date in the form YYYY-MM-DD"},
		{[]string{"company", "update", a, "--full-name", ""}, "full_name is required"},
		{[]string{"company", "update", a, "--from-json", `{"statu":"active"}`}, `--from-json: unknown field "statu"`},
		{[]string{"company", "update", a, "--from-json", `{"paycode":"no"}`}, "--from-json: paycode must be a boolean, not string"},
		{[]string{"company", "update", a, "--from-json", `{"data_storage_time":"ninety"}`}, `--from-json: data_storage_time must be a whole number of days ("90" or 90), not "ninety"`},
		{[]string{"company", "update", a, "--from-json", `{"status":"active"`}, "--from-json: malformed JSON: the body ends early"},
		{[]string{"company", "update", a, "--from-json", `{}`}, "nothing to change: give at least one field flag (see --help) or --from-json"},
		{[]string{"company", "update", a, "--status", "active", "--from-json", `{"paycode":true}`}, "give the fields either as flags or with --from-json, not both (also given: --status)"},
		{[]string{"company", "update", "999", "--status", "active"}, "company 999 not found"},
		{[]string{"company", "update", "abc", "--status", "active"}, `the company id must be a positive whole number, not "abc"`},
		{[]string{"company", "show", "0"}, `the company id must be a positive whole number, not "0"`},
		{[]string{"company", "show", "999"}, "company 999 not found"},
	} {
		_, err := cli(t, dbURL, tt.args...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("recon %s: got error %v, want %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
	if after := cliJSON(t, dbURL, "company", "show", a); fmt.Sprint(after) != fmt.Sprint(got) {
		t.Fatalf("refused updates changed the company:\n got %v\nwant %v", after, got)
	}
}

// TestInactiveCompanyEndToEnd, on a real server and both engines: an
// operator deactivates a company with `recon company update`; its API calls
// and merchant calls get 403, no token is issued, its IPN waits (while
// another company's is sent), nothing of its data goes; activated again, the
// IPN is sent and the API answers.
func TestInactiveCompanyEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		rc, rcOther := testkit.NewReceiver(t), testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		other := setupMerchant(t, base, dbURL, rcOther.URL+"/ipn")
		code := m.checkout(t, "INV-1", 100000)
		otherCode := other.checkout(t, "INV-1", 100000)

		cliJSON(t, dbURL, "company", "update", m.company, "--status", "inactive")
		msg := fmt.Sprintf("company %s is inactive: its API access and notifications are suspended until an operator activates it", m.company)
		forbidden := map[string]any{"status": "error", "error": "forbidden", "message": msg}
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/transactions", ""},
			{"POST", "/api/v1/transactions", `{"transactions":[]}`},
			{"POST", "/api/v1/sandbox/transfers", fmt.Sprintf(`{"bank_account_id":%s,"amount":1000,"transaction_content":"x"}`, m.account)},
		} {
			status, body := testkit.Call(t, c.method, base+c.path, m.feedToken, c.body)
			if status != 403 || fmt.Sprint(body) != fmt.Sprint(forbidden) {
				t.Errorf("%s %s while inactive: %d %v", c.method, c.path, status, body)
			}
		}
		req, _ := http.NewRequest("GET", base+"/v1/order", nil)
		req.SetBasicAuth(m.merchantID, m.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var gw map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&gw)
		resp.Body.Close()
		if resp.StatusCode != 403 || fmt.Sprint(gw["error"]) != fmt.Sprint(map[string]any{"code": "forbidden", "message": msg}) {
			t.Errorf("gateway while inactive: %d %v", resp.StatusCode, gw)
		}
		clients := cliJSONList(t, dbURL, "company", "list")
		if len(clients) != 2 || clients[0]["status"] != "inactive" || clients[1]["status"] != "active" {
			t.Fatalf("company list: %v", clients)
		}

		// The operator's CLI still ingests (a statement, a simulated transfer):
		// the order is paid, its IPN is enqueued and waits.
		cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", m.account, "--amount", "100000", "--content", "chuyen tien "+code)
		// Another company's IPN, enqueued after, is sent: had the inactive
		// company's been claimable, the dispatcher, which claims in due
		// order, would have claimed it no later.
		cliJSON(t, dbURL, "simulate", "transfer", "--bank-account", other.account, "--amount", "100000", "--content", "chuyen tien "+otherCode)
		testkit.WaitFor(t, "the active company's ORDER_PAID", 15*time.Second, func() bool { return len(rcOther.IPNs("ORDER_PAID")) == 1 })
		waiting := cliJSONList(t, dbURL, "deliveries", "list", "--company", m.company)
		if len(waiting) != 1 || waiting[0]["status"] != "pending" || waiting[0]["attempts"] != float64(0) || len(rc.IPNs("ORDER_PAID")) != 0 {
			t.Fatalf("inactive company's deliveries: %v (received %d)", waiting, len(rc.IPNs("ORDER_PAID")))
		}

		cliJSON(t, dbURL, "company", "update", m.company, "--from-json", `{"status":"active"}`)
		testkit.WaitFor(t, "ORDER_PAID after activation", 15*time.Second, func() bool { return len(rc.IPNs("ORDER_PAID")) == 1 })
		m.pay(t, "no code", 5000) // the API takes the feed's transfers again
		if detail := m.gateway(t, "GET", "/v1/order/detail/INV-1", "")["data"].(map[string]any); detail["order_status"] != "CAPTURED" {
			t.Fatalf("order after activation: %v", detail)
		}
	})
}

// TestServeAppliesRetention: the server's maintenance pass (run at start,
// then hourly) deletes a company's transactions older than its
// data_storage_time, and keeps those of a company that keeps everything.
func TestServeAppliesRetention(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		csv := filepath.Join(t.TempDir(), "old.csv")
		if err := os.WriteFile(csv, []byte("Transaction_Date,Amount_In,Amount_Out,Transaction_Content,Reference_Number\n"+
			"2020-01-02 08:00:00,1000,,old one,REF1\n2020-01-03 08:00:00,1000,,old two,REF2\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, days := range []string{"30", "0"} {
			id := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "C"+days, "--short-name", "C", "--data-storage-time", days)["id"])
			acct := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", id, "--bank", "Vietcombank", "--number", "123")["id"])
			if rep := cliJSON(t, dbURL, "import", "--company", id, "--bank-account", acct, csv); rep["imported"] != 2.0 {
				t.Fatalf("import: %v", rep)
			}
			n, _ := strconv.ParseInt(id, 10, 64)
			ids = append(ids, n)
		}
		db, err := sqlstore.Open(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		total := func(company int64) int64 {
			_, n, err := db.Transactions(t.Context(), recon.LiveTenant(company), recon.TransactionFilter{Page: 1, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		startServer(t, dbURL)
		testkit.WaitFor(t, "the retention pass", 15*time.Second, func() bool { return total(ids[0]) == 0 })
		if n := total(ids[1]); n != 2 {
			t.Fatalf("the company that keeps everything has %d transactions, want 2", n)
		}
	})
}

// TestCompanyTryMemo: the memo tester from the command line.
func TestCompanyTryMemo(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewMigratedURL(t, "sqlite")
	co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
	id, _ := strconv.ParseInt(co, 10, 64)
	if _, err := dbtest.OpenURL(t, dbURL).ReplacePaymentCodeFormats(t.Context(), id, []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 4, SuffixTo: 8, CharacterType: recon.NumberOnly, IsActive: true}}); err != nil {
		t.Fatal(err)
	}
	out := cliJSON(t, dbURL, "company", "try-memo", co, "chuyển tiền ĐH 12 rồi dh99887766")
	if out["code"] != "DH99887766" || out["normalized"] != "CHUYEN TIEN DH 12 ROI DH99887766" {
		t.Fatalf("try-memo: %v", out)
	}
	text, err := cli(t, dbURL, "company", "try-memo", co, "DH123")
	if err != nil || !strings.Contains(text, "No payment code: DH123 has 3 digits after DH; format #1 needs 4 to 8") {
		t.Fatalf("try-memo text: %v\n%s", err, text)
	}
}
