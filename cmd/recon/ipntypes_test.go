package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/orders"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// types reads notification_types of an ipn.JSON answer.
func types(v map[string]any) []string {
	var out []string
	list, _ := v["notification_types"].([]any)
	for _, t := range list {
		s, _ := t.(string)
		out = append(out, s)
	}
	return out
}

// TestIPNSetNotificationTypes: `recon ipn set --notification-types` saves
// the types by the rules of PUT /v1/ipn (docs/api-v2.md, Notifications),
// without it keeps the target's own (v1 types for a new one); a refused list
// changes nothing; `recon hub ipn set`, whose balance changes have no types,
// has no such flag and leaves the IPN target's types alone.
func TestIPNSetNotificationTypes(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := context.Background()
		dbURL := dbtest.NewMigratedURL(t, engine)
		co := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty Hoa Sen", "--short-name", "HOASEN")["id"])
		set := func(extra ...string) map[string]any {
			t.Helper()
			return cliJSON(t, dbURL, append([]string{"ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn"}, extra...)...)
		}
		if got := set(); got["notification_types"] != nil {
			t.Fatalf("a new target that never chose shows notification_types %v, not the v1 answer", got["notification_types"])
		}
		if got := types(set("--notification-types", "ORDER_PAID, ORDER_PARTIALLY_PAID")); !slices.Equal(got, []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}) {
			t.Fatalf("--notification-types: %v", got)
		}
		if got := types(set("--rotate-signing-secret")); !slices.Equal(got, []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}) {
			t.Fatalf("a save without --notification-types: %v, want the target's own kept", got)
		}
		out, err := cli(t, dbURL, "ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn", "--notification-types", "ORDER_EXPIRED,REFUND_FAILED")
		if err != nil || !strings.Contains(out, "notification_types: ORDER_EXPIRED, REFUND_FAILED") {
			t.Fatalf("text output (%v):\n%s", err, out)
		}
		for _, c := range []struct{ value, want string }{
			{"ORDER_PAID,ORDER_SHIPPED", `unknown notification type "ORDER_SHIPPED" (known: ORDER_PAID, TRANSACTION_VOID, ORDER_PARTIALLY_PAID, ORDER_EXPIRED, REFUND_SUCCEEDED, REFUND_FAILED, INVOICE_ISSUED, INVOICE_FAILED, ENDPOINT_DISABLED)`},
			{"", "notification_types needs at least one of"},
			{"ORDER_PAID,ORDER_PAID", `notification type "ORDER_PAID" is listed twice`},
		} {
			if out, err := cli(t, dbURL, "ipn", "set", "--company", co, "--url", "https://shop.example.vn/ipn2", "--notification-types", c.value); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("--notification-types %q: %v (%s), want %q", c.value, err, out, c.want)
			}
		}
		// The hub IPN: no flag, no types shown, the IPN target's kept.
		if _, err := cli(t, dbURL, "hub", "ipn", "set", "--company", co, "--url", "https://shop.example.vn/hub-ipn", "--notification-types", "ORDER_PAID"); err == nil ||
			!strings.Contains(err.Error(), "unknown flag: --notification-types") {
			t.Errorf("hub ipn set --notification-types: %v", err)
		}
		hub := cliJSON(t, dbURL, "hub", "ipn", "set", "--company", co, "--url", "https://shop.example.vn/hub-ipn")
		if _, ok := hub["notification_types"]; ok || hub["ipn_url"] != "https://shop.example.vn/hub-ipn" {
			t.Errorf("hub ipn set answered %v", hub)
		}
		db := dbtest.OpenURL(t, dbURL)
		var id int64
		fmt.Sscan(co, &id)
		target, err := db.DeliveryTarget(ctx, id, recon.DeliveryIPN)
		if err != nil || target.URL != "https://shop.example.vn/ipn" || target.Settings != `{"notification_types":["ORDER_EXPIRED","REFUND_FAILED"]}` {
			t.Fatalf("the IPN target after the refusals and the hub's save: %+v %v", target, err)
		}
		// The hub IPN's save is audited against the hub IPN target it
		// replaced, not another target of the company.
		cliJSON(t, dbURL, "hub", "ipn", "set", "--company", co, "--url", "https://shop.example.vn/hub-ipn-2")
		entries, _, err := db.AuditEntries(ctx, recon.LiveTenant(id), recon.AuditFilter{Action: recon.AuditIPNUpdate, Page: 1, PerPage: 10})
		if err != nil || len(entries) == 0 {
			t.Fatalf("audit entries: %v %v", entries, err)
		}
		last := entries[0]
		if last.Object != recon.DeliveryHubIPN || !slices.Contains(last.Changes, recon.AuditChange{Field: "url", Before: "https://shop.example.vn/hub-ipn", After: "https://shop.example.vn/hub-ipn-2"}) {
			t.Errorf("the hub IPN's second save audited as %q %+v, want object hub_ipn and its own URL before", last.Object, last.Changes)
		}
	})
}

// v1IPNKeys are the keys of an IPN body as v1 sent it before API v2 (spec
// §2.8; recon's TestIPNDeliveryV1Unchanged holds the bytes).
var v1IPNKeys = []string{"customer", "customer.customer_id", "customer.id", "notification_type", "order", "order.custom_data",
	"order.custom_data_signed", "order.id", "order.ip_address", "order.order_amount", "order.order_currency", "order.order_description",
	"order.order_id", "order.order_invoice_number", "order.order_status", "order.user_agent", "timestamp", "transaction",
	"transaction.authentication_status", "transaction.card_brand", "transaction.card_expiry", "transaction.card_funding_method",
	"transaction.card_holder_name", "transaction.card_number", "transaction.id", "transaction.payment_method",
	"transaction.transaction_amount", "transaction.transaction_currency", "transaction.transaction_date",
	"transaction.transaction_id", "transaction.transaction_status", "transaction.transaction_type"}

// bodyKeys lists the key paths of a JSON object, sorted.
func bodyKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	var out []string
	for k, v := range m {
		out = append(out, k)
		if sub, ok := v.(map[string]any); ok {
			for _, sk := range slices.Collect(maps.Keys(sub)) {
				out = append(out, k+"."+sk)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestIPNTypesEndToEnd, on a real server with a real receiver, both
// engines (docs/api-v2.md, Notifications): a target saved the v1 way
// receives ORDER_PAID exactly as v1 sent it (its keys, the stored body byte
// for byte, signed) and no ORDER_PARTIALLY_PAID, which is not even
// enqueued; once it subscribes through PUT /v1/ipn it receives
// ORDER_PARTIALLY_PAID; a target that leaves ORDER_PAID out gets none.
//
// The new type comes from a real partial payment of an API v2 order
// through the server's sandbox transfers.
func TestIPNTypesEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		m := setupMerchant(t, base, dbURL, rc.URL+"/ipn") // recon ipn set, no --notification-types
		db := dbtest.OpenURL(t, dbURL)
		companyID, _ := parseID(m.company)
		tenant := recon.LiveTenant(companyID)
		count := func(event string) int {
			t.Helper()
			ds, err := db.Deliveries(ctx, tenant, recon.DeliveryFilter{Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, d := range ds {
				if d.Event == event {
					n++
				}
			}
			return n
		}
		// partial makes an API v2 order with a partial virtual account
		// (orders.Service, what POST /v2/orders calls) and pays part of it
		// through the server's sandbox transfers: ORDER_PARTIALLY_PAID, to a
		// target that subscribes.
		svc := &orders.Service{Store: db}
		partial := func(invoice string) {
			t.Helper()
			v, err := svc.Create(ctx, tenant, recon.OrderInput{InvoiceNumber: invoice, Amount: 100000, VA: recon.VAInput{AmountMode: recon.VAPartial}})
			if err != nil {
				t.Fatal(err)
			}
			m.pay(t, v.VAs[0].Number, 40000) // a memo code: the live tenant's bank has no connector
			if o, err := db.Order(ctx, tenant, invoice); err != nil || o.V2Status() != recon.OrderPartiallyPaid || o.PaidAmount != 40000 {
				t.Fatalf("order %s after a part: %+v %v", invoice, o, err)
			}
		}
		if data := m.gateway(t, "GET", "/v1/ipn", "")["data"].(map[string]any); data["notification_types"] != nil {
			t.Fatalf("GET /v1/ipn of a target saved the v1 way shows notification_types %v: not the v1 answer", data["notification_types"])
		}

		// Saved the v1 way: ORDER_PAID as before.
		m.pay(t, m.checkout(t, "INV-V1", 150000), 150000)
		testkit.WaitFor(t, "ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 1 })
		got := rc.Got()[0]
		if keys := bodyKeys(t, got.Body); !slices.Equal(keys, v1IPNKeys) {
			t.Errorf("ORDER_PAID keys %v, want v1's %v", keys, v1IPNKeys)
		}
		ds, err := db.Deliveries(ctx, tenant, recon.DeliveryFilter{Limit: 1})
		if err != nil || len(ds) != 1 || string(ds[0].Payload) != string(got.Body) {
			t.Fatalf("the body received is not the body stored: %s, %v", got.Body, err)
		}
		ipn := rc.IPNs(recon.IPNOrderPaid)[0]
		if tx := ipn["transaction"].(map[string]any); tx["transaction_type"] != "PAYMENT" || tx["transaction_status"] != "APPROVED" ||
			ipn["order"].(map[string]any)["order_status"] != "CAPTURED" {
			t.Errorf("ORDER_PAID: %v", ipn)
		}
		// A new-type event: not enqueued, not received.
		partial("INV-V1P")
		if n := count(recon.IPNOrderPartiallyPaid); n != 0 {
			t.Fatalf("%d ORDER_PARTIALLY_PAID enqueued for a target saved the v1 way", n)
		}
		// A later notification arrives alone: nothing else was on the way.
		m.pay(t, m.checkout(t, "INV-V1B", 20000), 20000)
		testkit.WaitFor(t, "the second ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 2 })
		if d := rc.Deliveries(); len(rc.Got()) != 2 || len(rc.IPNs(recon.IPNOrderPartiallyPaid)) != 0 {
			t.Fatalf("the v1 receiver got %d requests (%v), want the 2 ORDER_PAID only", len(rc.Got()), d)
		}

		// Subscribed through PUT /v1/ipn: ORDER_PARTIALLY_PAID arrives, v1's
		// types still do.
		set := m.gateway(t, "PUT", "/v1/ipn", `{"ipn_url":"`+rc.URL+`/ipn","secret_key":"ipn-secret-0123456789","notification_types":["ORDER_PAID","ORDER_PARTIALLY_PAID"]}`)
		if got := types(set["data"].(map[string]any)); !slices.Equal(got, []string{"ORDER_PAID", "ORDER_PARTIALLY_PAID"}) {
			t.Fatalf("PUT /v1/ipn: %v", set)
		}
		m.pay(t, m.checkout(t, "INV-V2", 90000), 90000)
		partial("INV-V2P")
		testkit.WaitFor(t, "ORDER_PARTIALLY_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPartiallyPaid)) == 1 })
		testkit.WaitFor(t, "the third ORDER_PAID", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPaid)) == 3 })
		pp := rc.IPNs(recon.IPNOrderPartiallyPaid)[0]
		if o, tx := pp["order"].(map[string]any), pp["transaction"].(map[string]any); o["order_invoice_number"] != "INV-V2P" ||
			o["order_status"] != "AUTHENTICATION_NOT_NEEDED" || o["order_amount"] != "100000.00" || tx["transaction_type"] != "PAYMENT" ||
			tx["transaction_status"] != "APPROVED" || tx["transaction_amount"] != "40000.00" {
			t.Errorf("ORDER_PARTIALLY_PAID: %v", pp)
		}
		for _, r := range rc.Got() {
			if strings.Contains(string(r.Body), "ORDER_PARTIALLY_PAID") {
				if keys := bodyKeys(t, r.Body); !slices.Equal(keys, v1IPNKeys) {
					t.Errorf("ORDER_PARTIALLY_PAID keys %v, want v1's", keys)
				}
			}
		}
		for _, r := range rc.Got() {
			if r.Header.Get("X-Secret-Key") != "ipn-secret-0123456789" {
				t.Errorf("a notification without the target's secret: %v", r.Header)
			}
		}

		// A target that leaves ORDER_PAID out gets none.
		m.gateway(t, "PUT", "/v1/ipn", `{"ipn_url":"`+rc.URL+`/ipn","notification_types":["ORDER_PARTIALLY_PAID"]}`)
		before := count(recon.IPNOrderPaid)
		m.pay(t, m.checkout(t, "INV-V3", 30000), 30000)
		if o := m.gateway(t, "GET", "/v1/order/detail/INV-V3", "")["data"].(map[string]any); o["order_status"] != "CAPTURED" {
			t.Fatalf("INV-V3: %v", o)
		}
		if n := count(recon.IPNOrderPaid); n != before {
			t.Fatalf("ORDER_PAID enqueued for a target that does not subscribe to it (%d, was %d)", n, before)
		}
	})
}

// TestTriggerOnlyWhatTheTargetSubscribesTo: recon trigger refuses, before
// making anything, an event the test-mode IPN target does not subscribe to,
// saying so and how to subscribe; a type the steps cause on the way that it
// does not subscribe to is named as not sent.
func TestTriggerOnlyWhatTheTargetSubscribesTo(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		dbURL := dbtest.NewMigratedURL(t, engine)
		db := dbtest.OpenURL(t, dbURL)
		company, companyID := triggerCompany(t, db, dbURL)
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", "https://shop.example.vn/test-ipn", "--notification-types", "TRANSACTION_VOID")
		out, err := cli(t, dbURL, "trigger", "ORDER_PAID", "--company", company)
		want := "the test-mode IPN target https://shop.example.vn/test-ipn does not subscribe to ORDER_PAID (it receives TRANSACTION_VOID), so it would never be sent: nothing was made. " +
			"Subscribe it with recon ipn set --company " + company + " --test --url https://shop.example.vn/test-ipn --notification-types TRANSACTION_VOID,ORDER_PAID"
		if err == nil || err.Error() != want {
			t.Fatalf("trigger ORDER_PAID: %v (%s), want %q", err, out, want)
		}
		noTestOrders(t, db, companyID)
		var res triggerResult
		out, err = cli(t, dbURL, "trigger", "TRANSACTION_VOID", "--company", company, "--json")
		if err != nil || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("trigger TRANSACTION_VOID: %v %s", err, out)
		}
		if len(res.Deliveries) != 1 || res.Deliveries[0].Event != recon.IPNTransactionVoid || !slices.Equal(res.NotSubscribed, []string{recon.IPNOrderPaid}) {
			t.Fatalf("trigger TRANSACTION_VOID: deliveries %+v, not subscribed %v", res.Deliveries, res.NotSubscribed)
		}
		out, err = cli(t, dbURL, "trigger", "TRANSACTION_VOID", "--company", company)
		if err != nil || !strings.Contains(out, "ORDER_PAID not sent: the test-mode IPN target does not subscribe to it") {
			t.Fatalf("text output (%v):\n%s", err, out)
		}
		// Subscribed (and without an active target, everything is held for
		// recon listen): ORDER_PAID is triggered.
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", "https://shop.example.vn/test-ipn", "--notification-types", "TRANSACTION_VOID,ORDER_PAID")
		if out, err := cli(t, dbURL, "trigger", "ORDER_PAID", "--company", company, "--json"); err != nil || json.Unmarshal([]byte(out), &res) != nil ||
			len(res.Deliveries) != 1 || res.Deliveries[0].Event != recon.IPNOrderPaid || len(res.NotSubscribed) != 0 {
			t.Fatalf("trigger ORDER_PAID subscribed: %v %s", err, out)
		}
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", "https://shop.example.vn/test-ipn", "--notification-types", "TRANSACTION_VOID", "--inactive")
		if out, err := cli(t, dbURL, "trigger", "ORDER_PAID", "--company", company, "--json"); err != nil || json.Unmarshal([]byte(out), &res) != nil ||
			len(res.Deliveries) != 1 || !res.Deliveries[0].Held {
			t.Fatalf("trigger ORDER_PAID with an inactive target: %v %s", err, out)
		}
	})
}

// TestTriggerV2Events: recon trigger ORDER_PARTIALLY_PAID and ORDER_EXPIRED
// on a running server with a test receiver, both engines: refused while the
// test-mode target keeps v1's types (saying so, making nothing); once it
// subscribes, an API v2 order paid in part by a transfer to its sandbox
// virtual account sends ORDER_PARTIALLY_PAID there, and an order expiring a
// second later sends ORDER_EXPIRED when the expiry pass runs (what a running
// server's sweep does; here called at a moment past the expiry).
func TestTriggerV2Events(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		rc := testkit.NewReceiver(t)
		dbURL := dbtest.NewMigratedURL(t, engine)
		startServer(t, dbURL, "--sandbox", "--allow-private-targets")
		db := dbtest.OpenURL(t, dbURL)
		company, companyID := triggerCompany(t, db, dbURL)
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", rc.URL+"/ipn", "--sandbox", "--allow-private-targets")
		for _, ev := range []string{"ORDER_PARTIALLY_PAID", "ORDER_EXPIRED"} {
			if out, err := cli(t, dbURL, "trigger", ev, "--company", company); err == nil ||
				!strings.Contains(err.Error(), "does not subscribe to "+ev+" (it receives ORDER_PAID, TRANSACTION_VOID), so it would never be sent: nothing was made") {
				t.Fatalf("trigger %s for a target saved the v1 way: %v (%s)", ev, err, out)
			}
		}
		noTestOrders(t, db, companyID)
		cliJSON(t, dbURL, "ipn", "set", "--company", company, "--test", "--url", rc.URL+"/ipn", "--sandbox", "--allow-private-targets",
			"--notification-types", "ORDER_PARTIALLY_PAID,ORDER_EXPIRED")

		var res triggerResult
		out, err := cli(t, dbURL, "trigger", "ORDER_PARTIALLY_PAID", "--company", company, "--amount", "300000", "--json")
		if err != nil || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("trigger ORDER_PARTIALLY_PAID: %v %s", err, out)
		}
		o := res.Order
		if o == nil || o.V2ID == "" || o.V2Status != recon.OrderPartiallyPaid || o.PaidAmount != 150000 || !strings.HasPrefix(o.VirtualAccount, recon.SandboxVAPrefix) ||
			res.Transaction == nil || res.Transaction.Amount != 150000 || len(res.Deliveries) != 1 || res.Deliveries[0].Event != recon.IPNOrderPartiallyPaid || res.Deliveries[0].Held {
			t.Fatalf("trigger ORDER_PARTIALLY_PAID answered %s", out)
		}
		testkit.WaitFor(t, "ORDER_PARTIALLY_PAID at the test URL", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderPartiallyPaid)) == 1 })
		pp := rc.IPNs(recon.IPNOrderPartiallyPaid)[0]
		if b, tx := pp["order"].(map[string]any), pp["transaction"].(map[string]any); b["order_invoice_number"] != o.InvoiceNumber ||
			tx["transaction_amount"] != "150000.00" || tx["transaction_id"] != fmt.Sprint(res.Transaction.ID) {
			t.Errorf("ORDER_PARTIALLY_PAID: %v", pp)
		}

		out, err = cli(t, dbURL, "trigger", "ORDER_EXPIRED", "--company", company)
		if err != nil || !strings.Contains(out, "virtual account "+recon.SandboxVAPrefix) ||
			!strings.Contains(out, "a running recon serve's sweep (every 15 seconds) expires it then and sends ORDER_EXPIRED") {
			t.Fatalf("trigger ORDER_EXPIRED (%v):\n%s", err, out)
		}
		invoice := regexp.MustCompile(`order +(TRIGGER-[0-9A-F]+)`).FindStringSubmatch(out)
		if invoice == nil {
			t.Fatalf("no order in:\n%s", out)
		}
		// The sweep's pass, at a moment past the expiry (the server's own
		// sweep may get there first on a slow run: the order expires once).
		now := time.Now().Add(2 * time.Second)
		if n, err := db.ExpireOrders(ctx, now, func(o *recon.Order) (*recon.Delivery, error) {
			return recon.IPNDelivery(o, recon.IPNOrderExpired, now)
		}); err != nil || n > 1 {
			t.Fatalf("the expiry pass expired %d orders: %v", n, err)
		}
		testkit.WaitFor(t, "ORDER_EXPIRED at the test URL", 20*time.Second, func() bool { return len(rc.IPNs(recon.IPNOrderExpired)) == 1 })
		exp := rc.IPNs(recon.IPNOrderExpired)[0]
		if b, tx := exp["order"].(map[string]any), exp["transaction"].(map[string]any); b["order_invoice_number"] != invoice[1] ||
			b["order_status"] != "CANCELLED" || tx["transaction_type"] != "EXPIRY" || tx["transaction_status"] != "EXPIRED" {
			t.Errorf("ORDER_EXPIRED: %v", exp)
		}
		if n := len(rc.Got()); n != 2 {
			t.Errorf("the test URL got %d notifications, want the 2 it subscribes to", n)
		}
	})
}

// triggerCompany makes the company the trigger tests use (recon company
// create), with the payment code format DH and 6 to 10 digits.
func triggerCompany(t *testing.T, db *sqlstore.DB, dbURL string) (company string, companyID int64) {
	t.Helper()
	co := cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty TNHH Kích Hoạt", "--short-name", "KICHHOAT")
	company, companyID = fmt.Sprint(co["id"]), int64(co["id"].(float64))
	if _, err := db.ReplacePaymentCodeFormats(context.Background(), companyID, []recon.PaymentCodeFormat{
		{Prefix: "DH", SuffixFrom: 6, SuffixTo: 10, CharacterType: recon.NumberOnly, IsActive: true},
	}); err != nil {
		t.Fatal(err)
	}
	return company, companyID
}

// noTestOrders fails t when the company's test tenant has an order: a
// refused trigger makes nothing.
func noTestOrders(t *testing.T, db *sqlstore.DB, companyID int64) {
	t.Helper()
	ctx := context.Background()
	tenant, err := db.TenantOf(ctx, companyID, false)
	if err != nil {
		t.Fatal(err)
	}
	if orders, n, err := db.Orders(ctx, tenant.ID, recon.OrderFilter{Page: 1, PerPage: 10}); err != nil || n != 0 {
		t.Fatalf("a refused trigger made orders: %v %v", orders, err)
	}
}
