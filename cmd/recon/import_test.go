package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recon/sqlstore/dbtest"
)

// goldenLines is how many transactions the statement package's golden file
// says a sample holds.
func goldenLines(t *testing.T, sample string) int {
	t.Helper()
	raw, err := os.ReadFile("../../statement/testdata/" + sample + ".golden")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Lines []json.RawMessage `json:"lines"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	return len(g.Lines)
}

// TestImport imports camt.053, MT940 and CSV samples through the CLI on both
// engines: everything once, nothing twice, a bad file all or nothing.
func TestImport(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		url := dbtest.NewMigratedURL(t, engine)
		id := fmt.Sprint(cliJSON(t, url, "company", "create", "--full-name", "A", "--short-name", "A")["id"])
		for _, tt := range []struct{ sample, number, format string }{
			{"camt053_v02_vietcombank.xml", "0071001234567", "camt053"},
			{"camt053_v08_techcombank.xml", "19036868686868", "camt053"},
			{"mt940_vietinbank.sta", "101234567890", "mt940"},
			{"csv_comma_bom.csv", "123", "csv"},
		} {
			acct := fmt.Sprint(cliJSON(t, url, "bank-account", "create", "--company", id, "--bank", "Bank", "--number", tt.number)["id"])
			path := "../../statement/testdata/" + tt.sample
			want := goldenLines(t, tt.sample)
			rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, path)
			if rep["format"] != tt.format || rep["imported"] != float64(want) || rep["duplicates"] != 0.0 {
				t.Fatalf("%s: %v, want %d imported", tt.sample, rep, want)
			}
			rep = cliJSON(t, url, "import", "--company", id, "--bank-account", acct, path)
			if rep["imported"] != 0.0 || rep["duplicates"] != float64(want) {
				t.Fatalf("%s again: %v, want %d duplicates", tt.sample, rep, want)
			}
		}
		// A file naming another account is refused.
		acct := fmt.Sprint(cliJSON(t, url, "bank-account", "create", "--company", id, "--bank", "Bank", "--number", "999")["id"])
		if _, err := cli(t, url, "import", "--company", id, "--bank-account", acct, "../../statement/testdata/camt053_v02_vietcombank.xml"); err == nil {
			t.Fatal("a statement of another account was imported")
		}
		// Bad rows: all or nothing, or every bad row reported.
		bad := "../../statement/testdata/csv_errors.csv"
		_, err := cli(t, url, "import", "--company", id, "--bank-account", acct, bad)
		if err == nil || !strings.HasPrefix(err.Error(), "row 3: ") {
			t.Fatalf("bad file: %v, want the first bad row named", err)
		}
		rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, bad, "--skip-invalid")
		if rep["imported"] != float64(goldenLines(t, "csv_errors.csv")) || len(rep["skipped"].([]any)) < 5 {
			t.Fatalf("skip-invalid: %v", rep)
		}
		// Another company's bank account is not found.
		other := fmt.Sprint(cliJSON(t, url, "company", "create", "--full-name", "B", "--short-name", "B")["id"])
		if _, err := cli(t, url, "import", "--company", other, "--bank-account", acct, bad); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Fatalf("other company's account: %v", err)
		}
	})
}

// TestImportRefusesImplausibleDates: `recon import` refuses a statement
// with a row dated more than a day ahead or before 2000, naming the row and
// transaction_date, and stores nothing of it; a row dated within the day
// ahead is taken (docs/statements.md).
func TestImportRefusesImplausibleDates(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		url := dbtest.NewMigratedURL(t, engine)
		id := fmt.Sprint(cliJSON(t, url, "company", "create", "--full-name", "A", "--short-name", "A")["id"])
		acct := fmt.Sprint(cliJSON(t, url, "bank-account", "create", "--company", id, "--bank", "Bank", "--number", "123")["id"])
		file := func(date string) string {
			path := filepath.Join(t.TempDir(), "statement.csv")
			body := "transaction_date,amount_in,transaction_content,reference_number\n" +
				"2026-03-01 08:00:00,1000,chuyen tien,OK1\n" + date + ",2000,chuyen tien,R2\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}
		for date, want := range map[string]string{
			"9999-12-31 00:00:00": "row 3: transaction_date 9999-12-31 00:00:00 is more than a day in the future",
			"1999-12-31 23:59:59": "row 3: transaction_date 1999-12-31 23:59:59 is before 2000-01-01: a transaction cannot be that old",
		} {
			if _, err := cli(t, url, "import", "--company", id, "--bank-account", acct, file(date)); err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("%s: %v, want %q", date, err, want)
			}
		}
		// Nothing of the refused files was stored: OK1 is new.
		soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, file(soon)); rep["imported"] != 2.0 || rep["duplicates"] != 0.0 {
			t.Fatalf("a file dated an hour ahead: %v, want 2 imported", rep)
		}
	})
}

// TestImportBankExports: the banks' xlsx and Vietnamese CSV exports through
// the CLI on both engines (docs/statements.md, Bank exports): --preview
// shows the rows and stores nothing, the import counts them, a layout no
// alias knows imports once its mapping is saved (recon statement-mapping),
// a bad row fails naming its row and column, storing nothing.
func TestImportBankExports(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		url := dbtest.NewMigratedURL(t, engine)
		id := fmt.Sprint(cliJSON(t, url, "company", "create", "--full-name", "A", "--short-name", "A")["id"])
		acct := fmt.Sprint(cliJSON(t, url, "bank-account", "create", "--company", id, "--bank", "Techcombank", "--number", "19034567890123")["id"])
		xlsx := "../../statement/testdata/bank_techcombank.xlsx"
		out, err := cli(t, url, "import", "--company", id, "--bank-account", acct, "--preview", xlsx)
		if err != nil || !strings.Contains(out, "xlsx: 3 rows would be imported, 0 bad; nothing stored") || !strings.Contains(out, "FT26305123456789") {
			t.Fatalf("preview: %v\n%s", err, out)
		}
		rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, xlsx)
		if rep["format"] != "xlsx" || rep["imported"] != 3.0 || rep["orders_paid"] != 0.0 {
			t.Fatalf("xlsx: %v", rep)
		}
		rep = cliJSON(t, url, "import", "--company", id, "--bank-account", acct, "../../statement/testdata/bank_mb.csv")
		if rep["format"] != "csv" || rep["imported"] != 3.0 {
			t.Fatalf("MB CSV: %v", rep)
		}
		dir := t.TempDir()
		odd := filepath.Join(dir, "odd.csv")
		if err := os.WriteFile(odd, []byte("Báo cáo\nThời điểm,Tiền về,Lời nhắn,Mã\n05/11/2026 10:00,\"1.000.000\",chuyen DH9,X1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := cli(t, url, "import", "--company", id, "--bank-account", acct, odd); err == nil || !strings.Contains(out+err.Error(), "no header row found") {
			t.Fatalf("unknown layout: %v %s", err, out)
		}
		m := cliJSON(t, url, "statement-mapping", "--company", id, "--bank-account", acct, "--date", "Thời điểm", "--amount-in", "Tiền về", "--content", "Lời nhắn", "--reference", "Mã")
		if mm, _ := m["mapping"].(map[string]any); mm["date"] != "Thời điểm" {
			t.Fatalf("mapping: %v", m)
		}
		if rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, odd); rep["imported"] != 1.0 {
			t.Fatalf("mapped: %v", rep)
		}
		if out, err := cli(t, url, "statement-mapping", "--company", id, "--bank-account", acct, "--date", "A"); err == nil {
			t.Fatalf("a mapping without content: %s", out)
		}
		if m := cliJSON(t, url, "statement-mapping", "--company", id, "--bank-account", acct, "--clear"); m["mapping"] != nil {
			t.Fatalf("cleared: %v", m)
		}
		bad := filepath.Join(dir, "bad.csv")
		if err := os.WriteFile(bad, []byte("Ngày giao dịch;Ghi có;Diễn giải;Số tham chiếu\n01/11/2026;1.000;DH1;Z1\n02/11/2026;abc;DH2;Z2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := cli(t, url, "import", "--company", id, "--bank-account", acct, bad); err == nil || !strings.Contains(out+err.Error(), `row 3: Ghi có: "abc" is not an amount`) {
			t.Fatalf("bad row: %v %s", err, out)
		}
		if rep := cliJSON(t, url, "import", "--company", id, "--bank-account", acct, "--preview", bad); rep["row_count"] != 1.0 || rep["invalid_count"] != 1.0 {
			t.Fatalf("preview of a bad file: %v", rep)
		}
	})
}
