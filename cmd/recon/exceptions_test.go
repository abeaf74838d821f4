package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestExceptionsEndToEnd closes the exceptions loop on a real server, on both
// engines: a transfer with a mistyped code → in the queue with the order as
// suggestion → an Accountant matches it by hand → the order is paid and the
// ORDER_PAID IPN reaches the merchant's loopback endpoint, signed → the
// exception leaves the open list and its history says who, when and why. The
// CLI lists and resolves too.
func TestExceptionsEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
		code := m.checkout(t, "INV-0001", 150000)
		order := m.gateway(t, "GET", "/v1/order/detail/INV-0001", "")["data"].(map[string]any)
		orderID := order["id"]

		cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "ketoan@saomai.vn", "--role", "Accountant", "--permission", "view_transactions")
		cliJSON(t, dbURL, "user", "create", "--company", m.company, "--email", "nhanvien@saomai.vn", "--role", "Member", "--permission", "view_transactions")
		client := cliJSON(t, dbURL, "client", "create", "--company", m.company, "--name", "back office", "--scopes", "transaction:read exception:write")["client_id"].(string)
		issued := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "ketoan@saomai.vn", "--scopes", "transaction:read exception:write")
		if issued["scope"] != "transaction:read exception:write" {
			t.Fatalf("an Accountant's token: %v", issued)
		}
		token := issued["access_token"].(string)

		wrong := testkit.Typo(code)
		m.pay(t, wrong, 150000)
		status, body := testkit.Call(t, "GET", base+"/api/v1/exceptions", token, "")
		if status != 200 || len(body["data"].([]any)) != 1 {
			t.Fatalf("the queue: %d %v", status, body)
		}
		e := body["data"].([]any)[0].(map[string]any)
		txID := int64(e["transaction_id"].(float64))
		sug := e["suggestions"].([]any)
		if e["kind"] != "unmatched" || e["reason"] != "no order with payment code "+wrong || len(sug) != 1 {
			t.Fatalf("the exception: %v", e)
		}
		if s := sug[0].(map[string]any); s["order_invoice_number"] != "INV-0001" || fmt.Sprint(s["order_id"]) != fmt.Sprint(orderID) ||
			fmt.Sprint(s["reasons"]) != "[same_amount similar_code]" {
			t.Fatalf("the suggestion: %v", s)
		}
		// The CLI shows the same queue.
		list := cliJSON(t, dbURL, "exceptions", "list", "--company", m.company)
		if l := list["exceptions"].([]any); len(l) != 1 || l[0].(map[string]any)["transaction_id"] != float64(txID) {
			t.Fatalf("recon exceptions list: %v", list)
		}

		status, body = testkit.Call(t, "POST", fmt.Sprintf("%s/api/v1/exceptions/%d/resolve", base, txID), token,
			fmt.Sprintf(`{"action":"match","order_id":%v,"note":"the payer swapped two digits of %s"}`, orderID, code))
		if status != 200 {
			t.Fatalf("resolve: %d %v", status, body)
		}
		testkit.WaitFor(t, "ORDER_PAID", 10*time.Second, func() bool { return len(rc.IPNs("ORDER_PAID")) > 0 })
		paid := rc.IPNs("ORDER_PAID")
		if len(paid) != 1 || paid[0]["order"].(map[string]any)["order_invoice_number"] != "INV-0001" ||
			paid[0]["transaction"].(map[string]any)["transaction_amount"] != "150000.00" {
			t.Fatalf("ORDER_PAID: %v", paid)
		}
		h, raw := rc.Got()[0].Header, rc.Got()[0].Body
		if err := delivery.Verify(m.signingSecret, h.Get("X-Recon-Timestamp"), h.Get("X-Recon-Signature"), raw, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		if o := m.gateway(t, "GET", "/v1/order/detail/INV-0001", "")["data"].(map[string]any); o["order_status"] != recon.OrderCaptured {
			t.Fatalf("order after the match: %v", o)
		}

		// Gone from the open list; its history says who, when and why.
		if _, body := testkit.Call(t, "GET", base+"/api/v1/exceptions", token, ""); len(body["data"].([]any)) != 0 {
			t.Fatalf("open after the match: %v", body)
		}
		status, body = testkit.Call(t, "GET", fmt.Sprintf("%s/api/v1/exceptions/%d", base, txID), token, "")
		d := body["data"].(map[string]any)
		r := d["resolution"].(map[string]any)
		if status != 200 || d["status"] != "resolved" || r["action"] != "match" || r["note"] != "the payer swapped two digits of "+code ||
			fmt.Sprint(r["resolved_by"]) != fmt.Sprintf("map[email:ketoan@saomai.vn user_id:%v]", r["resolved_by"].(map[string]any)["user_id"]) {
			t.Fatalf("history: %d %v", status, d)
		}
		if _, err := time.Parse(recon.DateTimeLayout, r["resolved_at"].(string)); err != nil {
			t.Errorf("resolved_at %v", r["resolved_at"])
		}
		ds := d["match_decisions"].([]any)
		if len(ds) != 1 || ds[0].(map[string]any)["rule"] != "manual" || ds[0].(map[string]any)["outcome"] != "matched" {
			t.Fatalf("decisions: %v", ds)
		}

		// The CLI resolves as a user who may, and refuses one who may not.
		m.pay(t, "DH9999999", 20000)
		list = cliJSON(t, dbURL, "exceptions", "list", "--company", m.company, "--kind", "unmatched")
		other := fmt.Sprint(list["exceptions"].([]any)[0].(map[string]any)["transaction_id"])
		if out, err := cli(t, dbURL, "exceptions", "resolve", other, "--company", m.company, "--ignore", "--note", "x", "--user", "nhanvien@saomai.vn"); err == nil ||
			!strings.Contains(err.Error(), "may not resolve exceptions") {
			t.Fatalf("a Member resolved: %q %v", out, err)
		}
		res := cliJSON(t, dbURL, "exceptions", "resolve", other, "--company", m.company, "--refund", "--note", "sent back by the bank", "--user", "ketoan@saomai.vn")
		if res["action"] != "refund" || res["resolved_by"].(map[string]any)["email"] != "ketoan@saomai.vn" || res["livemode"] != true {
			t.Fatalf("recon exceptions resolve: %v", res)
		}
		if out, err := cli(t, dbURL, "exceptions", "resolve", other, "--company", m.company, "--ignore", "--note", "x", "--user", "ketoan@saomai.vn"); err == nil ||
			!strings.Contains(err.Error(), "already resolved") {
			t.Fatalf("resolved twice: %q %v", out, err)
		}
		resolved := cliJSON(t, dbURL, "exceptions", "list", "--company", m.company, "--resolved")
		if n := len(resolved["exceptions"].([]any)); n != 2 {
			t.Fatalf("%d resolved, want 2: %v", n, resolved)
		}
		// Test mode has its own, empty, queue.
		if test := cliJSON(t, dbURL, "exceptions", "list", "--company", m.company, "--test"); len(test["exceptions"].([]any)) != 0 {
			t.Fatalf("test mode's queue: %v", test)
		}
		if len(rc.IPNs("ORDER_PAID")) != 1 {
			t.Fatalf("ORDER_PAID IPNs: %d, want 1", len(rc.IPNs("ORDER_PAID")))
		}
	})
}
