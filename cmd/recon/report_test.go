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

// TestReportRefunds: `recon report` shows the refunds requested in the
// range (docs/dashboard.md, Report), as GET /api/v1/reconciliation does:
// the JSON's refunds key, the text's refunds lines; both engines.
func TestReportRefunds(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")["id"])
		db := dbtest.OpenURL(t, dbURL)
		id, _ := strconv.ParseInt(co, 10, 64)
		acc, _ := strconv.ParseInt(account, 10, 64)
		tenant := recon.TenantFromRow(id, true)
		now := time.Now()
		res, err := db.IngestTransactions(t.Context(), tenant, []recon.TransactionInput{{BankAccountID: acc, TransactionDate: now, AmountIn: 90000,
			Content: "chuyen nham", ReferenceNumber: "FT1"}}, []string{""})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.CreateRefund(t.Context(), tenant, &recon.RefundRequest{TransactionID: res[0].ID, Amount: 40000, Reason: "chuyển nhầm",
			Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "1", AccountName: "A"}, By: recon.RefundActor{ClientID: "c"}}, now); err != nil {
			t.Fatal(err)
		}
		rep := cliJSON(t, dbURL, "report", "--company", co)
		rf, _ := rep["refunds"].(map[string]any)
		if rf == nil || rf["count"] != 1.0 || rf["amount"] != 40000.0 || rf["by_status"].(map[string]any)["pending"].(map[string]any)["amount"] != 40000.0 {
			t.Errorf("report --json refunds: %v", rep["refunds"])
		}
		out, err := cli(t, dbURL, "report", "--company", co)
		if err != nil || !strings.Contains(out, "refunds") || !strings.Contains(out, "40000 VND  (refunded or being refunded)") || !strings.Contains(out, "pending") {
			t.Errorf("report: %v\n%s", err, out)
		}
	})
}
