package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestOrdersV2EndToEnd runs `recon serve` on each engine with a real
// receiver: an order made through POST /v2/orders is paid through its
// virtual account in two partial transfers (ORDER_PARTIALLY_PAID, then
// ORDER_PAID, to a target that subscribes); another expires by the sweep
// loop (ORDER_EXPIRED) and money sent to its expired account is a
// va_inactive exception that changes nothing.
func TestOrdersV2EndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets", "--sweep-interval", "250ms")
		rc := testkit.NewReceiver(t)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Sao Mai", "--short-name", "SAOMAI")["id"])
		cliJSON(t, dbURL, "user", "create", "--company", co, "--email", "boss@saomai.vn", "--role", "Admin")
		client := cliJSON(t, dbURL, "client", "create", "--company", co, "--name", "shop",
			"--scopes", "order:read order:write transaction:read transaction:write")["client_id"].(string)
		tok := cliJSON(t, dbURL, "token", "issue", "--client", client, "--user", "boss@saomai.vn",
			"--scopes", "order:read order:write transaction:read transaction:write")["access_token"].(string)
		account := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", co, "--bank", "Vietcombank", "--number", "0071000123456", "--holder", "SAO MAI")["id"])
		cliJSON(t, dbURL, "ipn", "set", "--company", co, "--url", rc.URL+"/ipn", "--sandbox", "--allow-private-targets",
			"--notification-types", "ORDER_PAID,ORDER_PARTIALLY_PAID,ORDER_EXPIRED")

		status, body := testkit.Call(t, "POST", base+"/v2/orders", tok,
			`{"order_invoice_number":"DH-1","amount":300000,"bank_account_id":`+account+`,"va":{"amount_mode":"partial"}}`)
		if status != 201 {
			t.Fatalf("create: %d %v", status, body)
		}
		order := body["data"].(map[string]any)
		id := order["id"].(string)
		code := order["virtual_accounts"].([]any)[0].(map[string]any)["va_number"].(string)
		transfer := func(ref string, amount int64, memo string) {
			t.Helper()
			if status, body := testkit.Call(t, "POST", base+"/api/v1/sandbox/transfers", tok,
				fmt.Sprintf(`{"bank_account_id":%s,"amount":%d,"transaction_content":%q,"reference_number":%q}`, account, amount, memo, ref)); status != 200 {
				t.Fatalf("transfer %s: %d %v", ref, status, body)
			}
		}
		transfer("FT-1", 100000, "thanh toan "+code)
		testkit.WaitFor(t, "ORDER_PARTIALLY_PAID", 20*time.Second, func() bool { return len(rc.IPNs("ORDER_PARTIALLY_PAID")) == 1 })
		part := rc.IPNs("ORDER_PARTIALLY_PAID")[0]
		if tx := part["transaction"].(map[string]any); tx["transaction_amount"] != "100000.00" || part["order"].(map[string]any)["order_status"] != "AUTHENTICATION_NOT_NEEDED" {
			t.Errorf("ORDER_PARTIALLY_PAID body %v", part)
		}
		if status, body := testkit.Call(t, "GET", base+"/v2/orders/"+id, tok, ""); status != 200 || body["data"].(map[string]any)["status"] != "partially_paid" {
			t.Fatalf("after the first transfer: %d %v", status, body)
		}
		transfer("FT-2", 200000, code)
		testkit.WaitFor(t, "ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs("ORDER_PAID")) == 1 })
		if paid := rc.IPNs("ORDER_PAID")[0]; paid["order"].(map[string]any)["order_status"] != "CAPTURED" || len(rc.IPNs("ORDER_PARTIALLY_PAID")) != 1 {
			t.Errorf("ORDER_PAID body %v", paid)
		}
		status, body = testkit.Call(t, "GET", base+"/v2/orders/"+id, tok, "")
		if o := body["data"].(map[string]any); status != 200 || o["status"] != "paid" || o["paid_amount"] != 300000.0 ||
			o["virtual_accounts"].([]any)[0].(map[string]any)["status"] != "paid" {
			t.Fatalf("paid: %d %v", status, body)
		}

		// An order that expires in a second: the sweep loop expires it.
		status, body = testkit.Call(t, "POST", base+"/v2/orders", tok, `{"order_invoice_number":"DH-2","amount":50000,"bank_account_id":`+account+`,"expires_in":1}`)
		if status != 201 {
			t.Fatalf("create: %d %v", status, body)
		}
		short := body["data"].(map[string]any)
		shortCode := short["virtual_accounts"].([]any)[0].(map[string]any)["va_number"].(string)
		testkit.WaitFor(t, "ORDER_EXPIRED", 45*time.Second, func() bool { return len(rc.IPNs("ORDER_EXPIRED")) == 1 })
		if exp := rc.IPNs("ORDER_EXPIRED")[0]; exp["order"].(map[string]any)["order_invoice_number"] != "DH-2" || exp["order"].(map[string]any)["order_status"] != "CANCELLED" {
			t.Errorf("ORDER_EXPIRED body %v", exp)
		}
		transfer("FT-3", 50000, "DH-2 "+shortCode)
		status, body = testkit.Call(t, "GET", base+"/v2/orders/"+short["id"].(string), tok, "")
		if o := body["data"].(map[string]any); status != 200 || o["status"] != "expired" || o["paid_amount"] != 0.0 {
			t.Fatalf("expired order after a transfer: %d %v", status, body)
		}
		status, body = testkit.Call(t, "GET", base+"/api/v1/exceptions?kind=va_inactive", tok, "")
		if list, _ := body["data"].([]any); status != 200 || len(list) != 1 || !strings.Contains(fmt.Sprint(list[0]), "is expired: nothing was applied") {
			t.Fatalf("va_inactive exceptions: %d %v", status, body)
		}
	})
}
