package main

import (
	"fmt"
	"testing"
	"time"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestStatementAfterSandboxTransfer replays issue 18's finding 13 from
// outside, on both engines: a sandbox transfer arrives (dated now), then a
// statement of earlier hours with the bank's balances is uploaded. The
// running balances follow the bank's order, not the arrival order: the
// statement's rows carry the bank's balances, the transfer's balance is the
// statement's last plus its amount, and no discontinuity is recorded
// (docs/api.md, Balances).
func TestStatementAfterSandboxTransfer(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox")
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "boss@saomai.vn", "--role", "Admin")
		client := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "erp", "--scopes", "transaction:write transaction:read bank-account:read")["client_id"].(string)
		feed := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "", "--scopes", "transaction:write")["access_token"].(string)
		reader := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "boss@saomai.vn", "--scopes", "transaction:read bank-account:read")["access_token"].(string)
		account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")["id"])

		if status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", feed,
			fmt.Sprintf(`{"bank_account_id":%s,"amount":2090000,"transaction_content":"chuyen tien","reference_number":"SIM1"}`, account)); status != 200 {
			t.Fatalf("sandbox transfer: %d %v", status, body)
		}
		// The statement: yesterday's morning, in the business time zone.
		ict := time.FixedZone("ICT", 7*3600)
		day := time.Now().In(ict).AddDate(0, 0, -1).Format("2006-01-02")
		csv := "transaction_date,amount_in,amount_out,transaction_content,reference_number,accumulated\n" +
			day + " 08:10:00,1000000,0,tien hang,FT1,93000000\n" +
			day + " 09:30:00,0,357000,phi,FT2,92643000\n" +
			day + " 10:20:00,3000000,0,tien hang,FT3,95643000\n"
		if status, raw := testkit.Do(t, "POST", fmt.Sprintf("%s/api/v1/bank-accounts/%s/statements?format=csv", base, account), testkit.Bearer(feed), "text/csv", csv); status != 200 {
			t.Fatalf("statement: %d %s", status, raw)
		}
		status, body := testkit.Call(t, "GET", base+"/api/v1/transactions?bank_account_id="+account, reader, "")
		if status != 200 {
			t.Fatalf("transactions: %d %v", status, body)
		}
		var got []string
		for _, x := range body["data"].([]any) {
			m := x.(map[string]any)
			got = append(got, fmt.Sprintf("%v %v", m["reference_number"], m["accumulated"]))
		}
		want := []string{"SIM1 9.7733e+07", "FT3 9.5643e+07", "FT2 9.2643e+07", "FT1 9.3e+07"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("balances newest first: %v, want %v", got, want)
		}
		status, body = testkit.Call(t, "GET", base+"/api/v1/balance-discontinuities", reader, "")
		if status != 200 || len(body["data"].([]any)) != 0 {
			t.Fatalf("discontinuities: %d %v, want none", status, body)
		}
	})
}
