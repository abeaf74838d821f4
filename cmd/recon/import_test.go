package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

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
		url := dbtest.NewURL(t, engine)
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
