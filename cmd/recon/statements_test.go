package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestStatementsProof: `recon import` records the statement import,
// `recon statements list` and `proof` show it and its proof, and `recon
// report --bank-account` the day balances (docs/statements.md, Balance
// proof; docs/dashboard.md, Report); both engines, with the API tests'
// MT940 and camt.053 files and a feed's row only in Recon.
func TestStatementsProof(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "VietinBank", "--number", "101234567890", "--holder", "SAO MAI")["id"])
		day1 := cliJSON(t, dbURL, "import", "--company", co, "--bank-account", account, "../../api/testdata/proof_day1.sta")
		if day1["import_id"] == nil || day1["import_id"] == 0.0 || day1["repeated"] != false {
			t.Fatalf("import: %v", day1)
		}
		if again := cliJSON(t, dbURL, "import", "--company", co, "--bank-account", account, "../../api/testdata/proof_day1.sta"); again["import_id"] != day1["import_id"] || again["repeated"] != true {
			t.Fatalf("import again: %v", again)
		}
		db := dbtest.OpenURL(t, dbURL)
		id, _ := strconv.ParseInt(co, 10, 64)
		acc, _ := strconv.ParseInt(account, 10, 64)
		if _, err := db.IngestTransactions(t.Context(), recon.TenantFromRow(id, true), []recon.TransactionInput{{BankAccountID: acc,
			TransactionDate: time.Date(2026, 9, 11, 10, 0, 0, 0, time.UTC), AmountIn: 70000, Content: "FEED", ReferenceNumber: "FEED-0911-1"}}, []string{""}); err != nil {
			t.Fatal(err)
		}
		day2 := cliJSON(t, dbURL, "import", "--company", co, "--bank-account", account, "../../api/testdata/proof_day2.xml")
		list := cliJSON(t, dbURL, "statements", "list", "--company", co, "--bank-account", account)
		if list["total"] != 2.0 || list["statements"].([]any)[0].(map[string]any)["id"] != day2["import_id"] {
			t.Fatalf("statements list: %v", list)
		}
		p := cliJSON(t, dbURL, "statements", "proof", "--company", co, "--bank-account", account, fmt.Sprint(day2["import_id"]))
		if p["difference"] != -70000.0 || p["proved"] != false {
			t.Fatalf("proof --json: %v", p)
		}
		out, err := cli(t, dbURL, "statements", "proof", "--company", co, "--bank-account", account, fmt.Sprint(day2["import_id"]))
		if err != nil || !strings.Contains(out, "difference -70000 VND") || !strings.Contains(out, "only_in_recon: 1 rows, -70000 VND") || !strings.Contains(out, "FEED-0911-1") {
			t.Fatalf("proof: %v\n%s", err, out)
		}
		out, err = cli(t, dbURL, "statements", "proof", "--company", co, "--bank-account", account, fmt.Sprint(day1["import_id"]))
		if err != nil || !strings.Contains(out, "proved: the closing balance equals") {
			t.Fatalf("proof of day 1: %v\n%s", err, out)
		}
		if _, err := cli(t, dbURL, "statements", "proof", "--company", co, "--bank-account", account, "x1"); err == nil || !strings.Contains(err.Error(), "positive integer") {
			t.Fatalf("proof x1: %v", err)
		}
		rep := cliJSON(t, dbURL, "report", "--company", co, "--from", "2026-09-10", "--to", "2026-09-11", "--bank-account", account)
		bal := rep["balances"].([]any)
		if len(bal) != 2 || bal[0].(map[string]any)["difference"] != 0.0 || bal[1].(map[string]any)["difference"] != -70000.0 || bal[1].(map[string]any)["recon_balance"] != 1.47e6 {
			t.Fatalf("report balances: %v", bal)
		}
		out, err = cli(t, dbURL, "report", "--company", co, "--from", "2026-09-10", "--to", "2026-09-11")
		if err != nil || !strings.Contains(out, "2026-09-11  bank 1400000 VND  Recon 1470000 VND  difference -70000 VND") {
			t.Fatalf("report: %v\n%s", err, out)
		}
	})
}
