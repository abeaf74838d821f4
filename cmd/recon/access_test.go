package main

import (
	"fmt"
	"testing"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestMemberCannotForgePayments replays issue 8's first finding from
// outside, on both engines: a Member of a company whose client may write
// transactions tries every way a transfer gets in (push, statement upload,
// sandbox transfer) with an order's payment code. No token the Member can
// obtain carries transaction:write, so each is refused and the order stays
// unpaid; a Member granted create_transactions may push. (That endpoints
// refuse a token carrying more than its user's role, e.g. after a
// demotion, is api's TestEveryRouteChecksTheRole.)
func TestMemberCannotForgePayments(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		code := m.checkout(t, "INV-FORGE", 500000)
		client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "all", "--scopes", "transaction:write transaction:read profile")["client_id"].(string)
		cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "member@saomai.vn", "--role", "Member")
		cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "clerk@saomai.vn", "--role", "Member", "--permission", "create_transactions")

		if out, err := cli(t, dbURL, "token", "issue", "--client", client, "--user", "member@saomai.vn", "--scopes", "transaction:write"); err == nil {
			t.Fatalf("a Member got a transaction:write token: %s", out)
		}
		tok := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "member@saomai.vn", "--scopes", "transaction:write profile")
		if tok["scope"] != "profile" {
			t.Fatalf("member token scope %v, want profile only", tok["scope"])
		}
		member := tok["access_token"].(string)
		transfer := fmt.Sprintf(`{"bank_account_id":%s,"amount":500000,"transaction_content":"chuyen tien %s"}`, m.account, code)
		push := fmt.Sprintf(`{"transactions":[{"bank_account_id":%s,"transaction_date":"2026-11-24 10:00:00","amount_in":500000,"transaction_content":"chuyen tien %s","reference_number":"FORGE1"}]}`, m.account, code)
		for _, try := range []struct{ path, body string }{
			{"/api/v1/transactions", push},
			{"/api/v1/sandbox/transfers", transfer},
			{"/api/v1/bank-accounts/" + m.account + "/statements?format=csv", "transaction_date,amount_in,transaction_content,reference_number\n2026-11-24 10:00:00,500000,chuyen tien " + code + ",FORGE2\n"},
		} {
			if status, body := testkit.Call(t, "POST", base+try.path, member, try.body); status != 403 {
				t.Errorf("Member POST %s: %d %v, want 403", try.path, status, body)
			}
		}
		if st := m.gateway(t, "GET", "/v1/order/detail/INV-FORGE", "")["data"].(map[string]any)["order_status"]; st == "CAPTURED" {
			t.Fatalf("a Member paid the order")
		}

		// With create_transactions the same push is allowed and pays.
		clerk := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "clerk@saomai.vn", "--scopes", "transaction:write transaction:read")
		if clerk["scope"] != "transaction:write" {
			t.Fatalf("clerk token scope %v", clerk["scope"])
		}
		if status, body := testkit.Call(t, "POST", base+"/api/v1/transactions", clerk["access_token"].(string), push); status != 200 {
			t.Fatalf("clerk push: %d %v", status, body)
		}
		if st := m.gateway(t, "GET", "/v1/order/detail/INV-FORGE", "")["data"].(map[string]any)["order_status"]; st != "CAPTURED" {
			t.Fatalf("order %v after the clerk's push, want CAPTURED", st)
		}
	})
}

// TestDemotionAppliesAtOnce: `recon user update` lowers an Admin to Member
// while the server runs; the Admin's token, issued before, is refused at its
// next request (the user is loaded fresh), and promoting back restores it.
func TestDemotionAppliesAtOnce(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Sao Mai", "--short-name", "SM")["id"])
		user := fmt.Sprint(cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "boss@saomai.vn", "--role", "Admin")["id"])
		client := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "erp", "--scopes", "company transaction:read")["client_id"].(string)
		token := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "boss@saomai.vn", "--scopes", "company transaction:read")["access_token"].(string)
		for _, path := range []string{"/api/v1/company", "/api/v1/transactions"} {
			if status, body := testkit.Call(t, "GET", base+path, token, ""); status != 200 {
				t.Fatalf("Admin GET %s: %d %v", path, status, body)
			}
		}
		cliJSON(t, dbURL, "user", "update", user, "--company", co, "--role", "Member")
		for _, path := range []string{"/api/v1/company", "/api/v1/transactions"} {
			if status, body := testkit.Call(t, "GET", base+path, token, ""); status != 403 {
				t.Fatalf("demoted GET %s: %d %v, want 403", path, status, body)
			}
		}
		// A user of another company cannot be changed through this one.
		other := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Other", "--short-name", "O")["id"])
		if out, err := cli(t, dbURL, "user", "update", user, "--company", other, "--role", "Admin"); err == nil {
			t.Fatalf("user update through another company: %s", out)
		}
		cliJSON(t, dbURL, "user", "update", user, "--company", co, "--role", "Member", "--permission", "view_transactions")
		if status, _ := testkit.Call(t, "GET", base+"/api/v1/transactions", token, ""); status != 200 {
			t.Fatalf("Member with view_transactions: %d, want 200", status)
		}
		if status, _ := testkit.Call(t, "GET", base+"/api/v1/company", token, ""); status != 403 {
			t.Fatalf("Member with view_transactions on the company API: %d, want 403", status)
		}
	})
}
