package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// TestTrigger drives `recon trigger` against a running server on both
// engines: the objects it makes are the test mode's, the notifications it
// causes are in the test outbox with the right events and order (held
// without a test IPN URL, sent to it with one), and nothing reaches live
// data or the live IPN URL.
func TestTrigger(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		liveRC, testRC := testkit.NewReceiver(t), testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		db := dbtest.OpenURL(t, dbURL)
		co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Kích Hoạt", "--short-name", "KICHHOAT")
		company := fmt.Sprint(co["id"])
		companyID := int64(co["id"].(float64))
		if _, err := db.ReplacePaymentCodeFormats(ctx, companyID, []recon.PaymentCodeFormat{
			{Prefix: "DH", SuffixFrom: 6, SuffixTo: 10, CharacterType: recon.NumberOnly, IsActive: true},
		}); err != nil {
			t.Fatal(err)
		}
		// Live data the trigger must leave alone: an account, merchant
		// credentials, an order awaiting payment, an IPN URL.
		liveAccount := fmt.Sprint(cliJSON(t, dbURL, "bank-account", "create", "--company", company, "--bank", "Vietcombank", "--number", "0071000123456")["id"])
		cliJSON(t, dbURL, "merchant", "credentials", "--company", company)
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--url", liveRC.URL+"/ipn", "--sandbox", "--allow-private-targets")
		var acct int64
		fmt.Sscan(liveAccount, &acct)
		if err := db.CreateOrder(ctx, &recon.Order{CompanyID: companyID, InvoiceNumber: "LIVE-1", Amount: 150000, PaymentCode: "DH1234567890", BankAccountID: acct}); err != nil {
			t.Fatal(err)
		}
		liveUntouched := func() {
			t.Helper()
			txs, total, err := db.Transactions(ctx, recon.LiveTenant(companyID), recon.TransactionFilter{Page: 1, Limit: 10})
			if err != nil || total != 0 || len(txs) != 0 {
				t.Errorf("live transactions: %d %v", total, err)
			}
			orders, n, err := db.Orders(ctx, recon.LiveTenant(companyID), recon.OrderFilter{Page: 1, PerPage: 10})
			if err != nil || n != 1 || orders[0].Status != recon.OrderAwaitingPayment {
				t.Errorf("live orders: %d %v", n, err)
			}
			if ds, err := db.Deliveries(ctx, recon.LiveTenant(companyID), recon.DeliveryFilter{}); err != nil || len(ds) != 0 {
				t.Errorf("live deliveries: %v %v", ds, err)
			}
			if accounts, err := db.BankAccounts(ctx, recon.LiveTenant(companyID)); err != nil || len(accounts) != 1 {
				t.Errorf("live bank accounts: %v %v", accounts, err)
			}
		}

		// TRANSACTION_VOID with no test data at all: a sandbox account and
		// test merchant credentials are made, the order is paid (ORDER_PAID)
		// then voided (TRANSACTION_VOID); no test IPN URL, so both are held.
		var res triggerResult
		out, err := cli(t, dbURL, "trigger", "TRANSACTION_VOID", "--company", company, "--json")
		if err != nil {
			t.Fatalf("trigger: %v", err)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("trigger printed %q: %v", out, err)
		}
		tenant, err := db.TenantOf(ctx, companyID, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Livemode || res.Company != companyID || !strings.HasPrefix(res.MerchantID, recon.TestMerchantPrefix) || len(res.Created) != 2 ||
			res.Order == nil || res.Order.Status != recon.OrderCancelled || res.Order.Amount != 150000 || !strings.HasPrefix(res.Order.PaymentCode, "DH") ||
			res.Transaction == nil || res.Transaction.Amount != 150000 {
			t.Fatalf("trigger answered %+v", res)
		}
		if len(res.Deliveries) != 2 || res.Deliveries[0].Event != recon.IPNOrderPaid || res.Deliveries[1].Event != recon.IPNTransactionVoid ||
			!res.Deliveries[0].Held || !res.Deliveries[1].Held {
			t.Fatalf("trigger's deliveries: %+v", res.Deliveries)
		}
		// The store agrees: the test tenant's outbox holds exactly these,
		// about the order; its account got the transfer.
		ds, err := db.Deliveries(ctx, tenant.ID, recon.DeliveryFilter{})
		if err != nil || len(ds) != 2 {
			t.Fatalf("test deliveries: %v %v", ds, err)
		}
		for i, d := range ds { // newest first
			var body struct {
				Type  string         `json:"notification_type"`
				Order map[string]any `json:"order"`
			}
			if err := json.Unmarshal(d.Payload, &body); err != nil || d.ID != res.Deliveries[1-i].ID || body.Type != d.Event ||
				body.Order["order_invoice_number"] != res.Order.InvoiceNumber || d.Status != recon.DeliveryPending ||
				d.NextAttemptAt.Before(time.Now().Add(recon.ListenerHold-time.Hour)) {
				t.Errorf("test delivery %d: %+v %s", d.ID, d, d.Payload)
			}
		}
		tx, err := db.Transaction(ctx, tenant.ID, res.Transaction.ID)
		if err != nil || tx.BankAccountID != res.BankAccount.ID || tx.Code != res.Order.PaymentCode {
			t.Fatalf("the trigger's transaction: %+v %v", tx, err)
		}
		liveUntouched()

		// With a test IPN URL, ORDER_PAID goes there (and only there), on
		// the same account and merchant.
		ipn := cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", testRC.URL+"/ipn", "--sandbox", "--allow-private-targets")
		out, err = cli(t, dbURL, "trigger", "order_paid", "--company", company, "--amount", "99000", "--json")
		if err != nil {
			t.Fatalf("trigger: %v", err)
		}
		var paid triggerResult
		if err := json.Unmarshal([]byte(out), &paid); err != nil {
			t.Fatal(err)
		}
		if len(paid.Created) != 0 || paid.BankAccount != res.BankAccount || paid.Order.Status != recon.OrderCaptured ||
			len(paid.Deliveries) != 1 || paid.Deliveries[0].Event != recon.IPNOrderPaid || paid.Deliveries[0].Held {
			t.Fatalf("second trigger: %+v", paid)
		}
		testkit.WaitFor(t, "ORDER_PAID at the test URL", 20*time.Second, func() bool { return len(testRC.IPNs(recon.IPNOrderPaid)) == 1 })
		got := testRC.IPNs(recon.IPNOrderPaid)[0]
		if o := got["order"].(map[string]any); o["order_invoice_number"] != paid.Order.InvoiceNumber || o["order_amount"] != "99000.00" {
			t.Errorf("test URL got %v", got)
		}
		h, body := testRC.Got()[0].Header, testRC.Got()[0].Body
		if err := delivery.Verify(ipn["signing_secret"].(string), h.Get("X-Recon-Timestamp"), h.Get("X-Recon-Signature"), body, time.Now(), time.Minute); err != nil {
			t.Errorf("signature: %v", err)
		}
		testkit.WaitFor(t, "the delivery recorded", 20*time.Second, func() bool {
			d, err := db.Delivery(ctx, tenant.ID, paid.Deliveries[0].ID)
			return err == nil && d.Status == recon.DeliveryDelivered
		})
		if len(liveRC.Got()) != 0 {
			t.Errorf("the live URL got %d notifications", len(liveRC.Got()))
		}
		liveUntouched()

		// The text output names what was made.
		out, err = cli(t, dbURL, "trigger", "ORDER_PAID", "--company", company)
		if err != nil || !strings.Contains(out, "ORDER_PAID triggered in the test mode of company "+company) ||
			!strings.Contains(out, "order        TRIGGER-") || !strings.Contains(out, "delivery") || !strings.Contains(out, "ORDER_PAID, ") {
			t.Errorf("text output (%v):\n%s", err, out)
		}

		// Refusals: live accounts, test tenants named as companies, unknown
		// events, bad amounts, a company whose transfers could not match.
		other := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Không Mã", "--short-name", "KHONGMA")["id"])
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"ORDER_PAID", "--company", company, "--bank-account", liveAccount}, "is not a test-mode account of company " + company},
			{[]string{"ORDER_PAID", "--company", fmt.Sprint(tenant.ID.ID())}, "is the test tenant of company " + company},
			{[]string{"LINK_CREATED", "--company", company}, `unknown event "LINK_CREATED": recon trigger knows ORDER_PAID, TRANSACTION_VOID`},
			{[]string{"ORDER_PAID", "--company", company, "--amount", "0"}, "--amount must be a whole number of VND"},
			{[]string{"ORDER_PAID", "--company", "999"}, "company 999 not found"},
			{[]string{"ORDER_PAID", "--company", other}, "company " + other + " cannot take bank-transfer payments yet"},
			{[]string{"ORDER_PAID"}, `required flag(s) "company" not set`},
		} {
			out, err := cli(t, dbURL, append([]string{"trigger"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("recon trigger %s: %v (%s), want an error containing %q", strings.Join(tt.args, " "), err, out, tt.want)
			}
		}
		liveUntouched()
		// The refused trigger made nothing for the company without formats.
		var otherID int64
		fmt.Sscan(other, &otherID)
		if ot, err := db.TenantOf(ctx, otherID, false); err == nil {
			if accounts, err := db.BankAccounts(ctx, ot.ID); err != nil || len(accounts) != 0 {
				t.Errorf("a refused trigger made test accounts: %v %v", accounts, err)
			}
			if m, err := db.MerchantOf(ctx, ot.ID); recon.ErrorCode(err) != recon.ENOTFOUND {
				t.Errorf("a refused trigger made test merchant credentials: %v %v", m, err)
			}
		}
	})
}

// TestTriggerHubEvents: recon trigger makes hub events in the company's
// test mode through the hosted page's own path; they are enqueued (held for
// recon listen without a test webhook); the live data is untouched.
func TestTriggerHubEvents(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
		names := func(res map[string]any) []string {
			var out []string
			for _, e := range res["events"].([]any) {
				e := e.(map[string]any)
				if e["delivery_id"] == 0.0 {
					t.Errorf("%v was not enqueued", e)
				}
				out = append(out, e["event"].(string))
			}
			return out
		}
		res := cliJSON(t, dbURL, "trigger", "BANK_ACCOUNT_LINKED", "--company", co)
		want := []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", "LINK_SESSION_STATE_CHANGED",
			"LINK_SESSION_STATE_CHANGED", "BANK_ACCOUNT_LINKED", "LINK_SESSION_COMPLETED"}
		if got := names(res); !slices.Equal(got, want) || res["bank_account_xid"] == nil {
			t.Fatalf("BANK_ACCOUNT_LINKED: %v\n%v", got, res)
		}
		linked := res["bank_account_xid"]
		res = cliJSON(t, dbURL, "trigger", "bank_account_inactived", "--company", co)
		if got := names(res); !slices.Contains(got, "BANK_ACCOUNT_INACTIVATED") || res["bank_account_xid"] != linked {
			t.Fatalf("BANK_ACCOUNT_INACTIVATED: %v\n%v", got, res)
		}
		res = cliJSON(t, dbURL, "trigger", "LINK_SESSION_FAILED", "--company", co)
		if got := names(res); !slices.Equal(got, []string{"LINK_TOKEN_CREATED", "LINK_SESSION_INITIALIZED", "LINK_SESSION_STATE_CHANGED", "LINK_SESSION_FAILED"}) {
			t.Fatalf("LINK_SESSION_FAILED: %v", got)
		}
		if text, err := cli(t, dbURL, "trigger", "LINK_TOKEN_EXPIRED", "--company", co); err != nil || !strings.Contains(text, "sweep") {
			t.Fatalf("LINK_TOKEN_EXPIRED: %v\n%s", err, text)
		}
		// All of it in the test mode.
		if live := cliJSONList(t, dbURL, "hub", "company", "list", "--company", co); len(live) != 0 {
			t.Fatalf("live hub companies: %v", live)
		}
		if test := cliJSONList(t, dbURL, "hub", "company", "list", "--company", co, "--test"); len(test) != 1 {
			t.Fatalf("test hub companies: %v", test)
		}
		if live := cliJSONList(t, dbURL, "bank-account", "list", "--company", co); len(live) != 0 {
			t.Fatalf("live bank accounts: %v", live)
		}
	})
}
