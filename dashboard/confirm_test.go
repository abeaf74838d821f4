package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// withQuery is path?fields.
func withQuery(path string, fields url.Values) string { return path + "?" + fields.Encode() }

// TestDashboardConfirm: every action that changes something for good goes
// through its confirmation page, on a real server, both engines: the page
// says what will happen (order, amounts, status after, the IPN and where it
// goes), a POST without the confirmation acts on nothing, CSRF and roles
// hold on the page and the POST, another tenant's or mode's ids are 404; and
// the lists the confirmations start from (suggestions on the queue, the
// failing filter, the home's open exceptions).
func TestDashboardConfirm(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newOpsEnv(t, engine)
		ctx := context.Background()
		boss, acct, member := e.signedIn(t, "boss@saomai.vn"), e.signedIn(t, "ketoan@saomai.vn"), e.signedIn(t, "nhanvien@saomai.vn")
		ipnURL := e.rc.URL + "/ipn"
		orderStatus := func(invoice string) string {
			return e.orderStatus(t, e.dashEnv.live, invoice)
		}
		contains := func(what, body string, wants ...string) {
			t.Helper()
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %q: %s", what, w, body)
				}
			}
		}

		// The order page's buttons lead to the confirmation (GET), not a POST.
		_, body := boss.Get("/dashboard/order?invoice=INV-PAID")
		contains("the paid order's page", body, `<form method="get" action="/dashboard/order/void">`)
		// Void: what happens, shown before it happens.
		status, body := boss.Get("/dashboard/order/void?invoice=INV-PAID")
		if status != http.StatusOK {
			t.Fatalf("void's confirmation: %d", status)
		}
		contains("void's confirmation", body, `id="c-invoice" class="memo">INV-PAID<`, "150,000 VND", `id="c-after" class="memo">Cancelled<`,
			`id="c-notification" class="memo">TRANSACTION_VOID → `+ipnURL+`<`, `name="confirm" value="yes"`)
		// A POST without the confirmation shows the same page and voids nothing;
		// without the CSRF token it is refused.
		if status, _, body := boss.PostFrom("/dashboard/order?invoice=INV-PAID", "/dashboard/order/void", url.Values{"invoice": {"INV-PAID"}}); status != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("void without the confirmation: %d %s", status, body)
		}
		if status, _, _ := boss.Post("/dashboard/order/void", url.Values{"invoice": {"INV-PAID"}, "confirm": {"yes"}}); status != http.StatusForbidden {
			t.Errorf("void without a CSRF token: %d", status)
		}
		// An Accountant may not void: no button, 403 on the page and the POST.
		_, body = acct.Get("/dashboard/order?invoice=INV-PAID")
		if strings.Contains(body, `id="void"`) {
			t.Error("the Accountant sees the void button")
		}
		if status, _ := acct.Get("/dashboard/order/void?invoice=INV-PAID"); status != http.StatusForbidden {
			t.Errorf("Accountant's void confirmation: %d", status)
		}
		if status, _, _ := acct.PostFrom("/dashboard/", "/dashboard/order/void", url.Values{"invoice": {"INV-PAID"}, "confirm": {"yes"}}); status != http.StatusForbidden {
			t.Errorf("Accountant's confirmed void: %d", status)
		}
		// Another company's order, and an unknown one: 404 on the page and the POST.
		for _, inv := range []string{"INV-OTHER", "NO-SUCH"} {
			if status, _ := boss.Get("/dashboard/order/void?invoice=" + inv); status != http.StatusNotFound {
				t.Errorf("void confirmation of %s: %d", inv, status)
			}
			if status, _, _ := boss.PostFrom("/dashboard/", "/dashboard/order/void", url.Values{"invoice": {inv}, "confirm": {"yes"}}); status != http.StatusNotFound {
				t.Errorf("confirmed void of %s: %d", inv, status)
			}
		}
		if got := orderStatus("INV-PAID"); got != recon.OrderCaptured {
			t.Fatalf("INV-PAID before the confirmed void: %s", got)
		}
		// Cancel: no IPN; an order that is not open cannot be cancelled (409).
		status, body = boss.Get("/dashboard/order/cancel?invoice=INV-OPEN")
		if status != http.StatusOK {
			t.Fatalf("cancel's confirmation: %d", status)
		}
		contains("cancel's confirmation", body, `id="c-notification" class="memo">none<`, "90,000 VND",
			`id="c-description" class="memo">&lt;b onmouseover=`) // the description, escaped
		if strings.Contains(body, "<b onmouseover") {
			t.Error("unescaped HTML on the cancel's confirmation")
		}
		if status, body := boss.Get("/dashboard/order/cancel?invoice=INV-PAID"); status != http.StatusConflict || !strings.Contains(body, "Only an order awaiting payment can be cancelled.") {
			t.Errorf("cancel confirmation of a paid order: %d %s", status, body)
		}

		// Resolve: the form leads to the confirmation, with the match's effect.
		x1 := e.excPath("X1")
		_, body = boss.Get(x1)
		contains("X1", body, `<form method="get" action="`+x1+`/resolve"`)
		match := url.Values{"resolve": {"match:INV-EXC"}, "note": {`<i>swapped</i> digits`}}
		status, body = boss.Get(withQuery(x1+"/resolve", match))
		if status != http.StatusOK {
			t.Fatalf("resolve's confirmation: %d %s", status, body)
		}
		contains("resolve's confirmation", body, `id="c-action" class="memo">Matched to an order<`, `id="c-note" class="memo">&lt;i&gt;swapped&lt;/i&gt; digits<`,
			`id="c-invoice" class="memo">INV-EXC<`, `id="c-paid-after" class="memo">160,000 VND<`, `id="c-after" class="memo">Captured<`,
			`id="c-notification" class="memo">ORDER_PAID → `+ipnURL+`<`)
		// Bad input is refused at the confirmation already (400, the reason,
		// nothing written), and so is a POST without the confirmation field.
		for _, bad := range []url.Values{{"resolve": {"match"}, "note": {"x"}}, {"resolve": {"ignore"}, "note": {""}},
			{"resolve": {"match"}, "invoice": {"INV-OTHER"}, "note": {"x"}}, {"resolve": {"erase"}, "note": {"x"}}} {
			if status, body := boss.Get(withQuery(x1+"/resolve", bad)); status != http.StatusBadRequest || !strings.Contains(body, `id="resolve-error"`) {
				t.Errorf("confirmation of %v: %d", bad, status)
			}
		}
		if status, _, body := boss.PostFrom(x1, x1+"/resolve", match); status != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("resolve without the confirmation: %d", status)
		}
		e.stillOpen(t, "X1")
		// A Member: 403 on the confirmation; the other tenant's and mode's: 404.
		if status, _ := member.Get(withQuery(x1+"/resolve", match)); status != http.StatusForbidden {
			t.Errorf("Member's resolve confirmation: %d", status)
		}
		for _, id := range []int64{e.otherExc, e.testExc} {
			if status, _ := boss.Get(withQuery(fmt.Sprint("/dashboard/exceptions/", id, "/resolve"), url.Values{"resolve": {"ignore"}, "note": {"x"}})); status != http.StatusNotFound {
				t.Errorf("resolve confirmation of exception %d: %d", id, status)
			}
		}
		// The queue shows each row's suggestions (X1's typo: INV-EXC).
		_, body = boss.Get("/dashboard/exceptions")
		contains("the queue", body, `<th scope="col">Suggested orders</th>`, `<a href="/dashboard/order?invoice=INV-EXC">INV-EXC</a> <small>(`)
		// The home counts the open exceptions (X1 to X4 and the transfer with
		// HTML in its memo) and links the queue.
		_, body = boss.Get("/dashboard/")
		contains("home", body, `id="open-exceptions">5<`, `href="/dashboard/exceptions" id="attention-exceptions"`)
		// Confirmed: matched, and its ORDER_PAID reaches the receiver.
		if status, loc, _ := boss.Confirm(withQuery(x1+"/resolve", match)); status != http.StatusSeeOther || loc != x1+"?order=INV-EXC" {
			t.Fatalf("confirmed match: %d %s", status, loc)
		}
		testkit.WaitFor(t, "ORDER_PAID of INV-EXC", 10*time.Second, func() bool {
			for _, p := range e.rc.IPNs("ORDER_PAID") {
				if p["order"].(map[string]any)["order_invoice_number"] == "INV-EXC" {
					return true
				}
			}
			return false
		})
		// The order's page lists its IPN (found by the order's id).
		_, body = boss.Get("/dashboard/order?invoice=INV-EXC")
		contains("INV-EXC's page", body, `<td>ORDER_PAID</td>`)
		// The void, confirmed, with its TRANSACTION_VOID.
		if status, loc, _ := boss.Confirm("/dashboard/order/void?invoice=INV-PAID"); status != http.StatusSeeOther || loc != "/dashboard/order?invoice=INV-PAID" {
			t.Fatalf("confirmed void: %d %s", status, loc)
		}
		if got := orderStatus("INV-PAID"); got != recon.OrderCancelled {
			t.Fatalf("INV-PAID after the confirmed void: %s", got)
		}
		voided := e.deliveryOf(t, e.live, "TRANSACTION_VOID", "INV-PAID")
		testkit.WaitFor(t, "the TRANSACTION_VOID delivered", 10*time.Second, func() bool {
			d, err := e.db.Delivery(ctx, e.live, voided.ID)
			return err == nil && d.Status == recon.DeliveryDelivered
		})

		// Replay one: the confirmation names the delivery and its target.
		paid := e.deliveryOf(t, e.live, "ORDER_PAID", "INV-EXC")
		dpath := fmt.Sprint("/dashboard/notifications/", paid.ID)
		status, body = boss.Get(dpath + "/replay")
		if status != http.StatusOK {
			t.Fatalf("replay's confirmation: %d", status)
		}
		contains("replay's confirmation", body, fmt.Sprintf(`id="c-delivery" class="memo">%d<`, paid.ID), `id="c-notification" class="memo">ORDER_PAID → `+ipnURL+`<`)
		if status, _, body := boss.PostFrom(dpath, dpath+"/replay", url.Values{}); status != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("replay without the confirmation: %d", status)
		}
		if d, err := e.db.Delivery(ctx, e.live, paid.ID); err != nil || d.Status != recon.DeliveryDelivered {
			t.Errorf("the delivery after an unconfirmed replay: %+v %v", d, err)
		}
		if status, _ := acct.Get(dpath + "/replay"); status != http.StatusForbidden {
			t.Errorf("Accountant's replay confirmation: %d", status)
		}
		for _, id := range []int64{e.otherDelivery, e.testDelivery} {
			if status, _ := boss.Get(fmt.Sprint("/dashboard/notifications/", id, "/replay")); status != http.StatusNotFound {
				t.Errorf("replay confirmation of delivery %d: %d", id, status)
			}
		}

		// Replay every failed one: an IPN failing (503) is counted on the
		// confirmation, listed by the failing filter, then sent again.
		failing := e.failingIPN(t, "INV-FAIL")
		_, body = boss.Get("/dashboard/notifications?status=failing")
		contains("the failing filter", body, fmt.Sprintf(`href="/dashboard/notifications/%d"`, failing.ID), `<option value="failing" selected>`)
		if strings.Contains(body, fmt.Sprintf(`href="/dashboard/notifications/%d"`, paid.ID)) {
			t.Error("the failing filter lists a delivered notification")
		}
		since := time.Now().Add(-time.Hour).Format("2006-01-02T15:04")
		replay := url.Values{"since": {since}, "kind": {"ipn"}}
		status, body = boss.Get(withQuery("/dashboard/notifications/replay", replay))
		if status != http.StatusOK {
			t.Fatalf("replay failed's confirmation: %d %s", status, body)
		}
		contains("replay failed's confirmation", body, `id="c-count" class="memo">1<`, `id="c-kind" class="memo">Payment IPN<`)
		if status, body := boss.Get(withQuery("/dashboard/notifications/replay", url.Values{"since": {"yesterday"}})); status != http.StatusBadRequest || !strings.Contains(body, "since must be a date and time") {
			t.Errorf("replay failed's confirmation, bad since: %d %s", status, body)
		}
		if status, _, body := boss.PostFrom("/dashboard/notifications", "/dashboard/notifications/replay", replay); status != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("replay failed without the confirmation: %d", status)
		}
		if status, _ := acct.Get(withQuery("/dashboard/notifications/replay", replay)); status != http.StatusForbidden {
			t.Errorf("Accountant's replay failed confirmation: %d", status)
		}
		if status, loc, _ := boss.Confirm(withQuery("/dashboard/notifications/replay", replay)); status != http.StatusSeeOther || loc != "/dashboard/notifications?replayed=1" {
			t.Fatalf("confirmed replay failed: %d %s", status, loc)
		}
		testkit.WaitFor(t, "the failed ORDER_PAID sent again", 10*time.Second, func() bool {
			d, err := e.db.Delivery(ctx, e.live, failing.ID)
			return err == nil && d.Status == recon.DeliveryDelivered
		})
	})
}

// TestDashboardWithoutOrders: a dashboard given no checkout.Service
// (Handler.Orders) hides void and cancel: no buttons on the order's page,
// and their confirmation pages and forms are 404 and change nothing.
func TestDashboardWithoutOrders(t *testing.T) {
	t.Parallel()
	e := newServer(t, "sqlite", func(h *dashboard.Handler) { h.Orders = nil })
	e.live = e.newCompany(t, "http://127.0.0.1:9/ipn")
	e.dashUser(t, e.live, "boss@saomai.vn", recon.RoleAdmin)
	e.pay(t, e.live, e.checkout(t, e.live, "INV-PAID", 150000, "paid"), 150000)
	e.checkout(t, e.live, "INV-OPEN", 90000, "open")
	boss := e.signedIn(t, "boss@saomai.vn")
	for _, invoice := range []string{"INV-PAID", "INV-OPEN"} {
		status, body := boss.Get("/dashboard/order?invoice=" + invoice)
		if status != http.StatusOK || strings.Contains(body, `action="/dashboard/order/void"`) || strings.Contains(body, `action="/dashboard/order/cancel"`) {
			t.Errorf("%s's page without Orders: %d %s", invoice, status, body)
		}
	}
	for _, action := range []string{"void", "cancel"} {
		for _, invoice := range []string{"INV-PAID", "INV-OPEN"} {
			if status, _ := boss.Get("/dashboard/order/" + action + "?invoice=" + invoice); status != http.StatusNotFound {
				t.Errorf("GET %s of %s: %d", action, invoice, status)
			}
			for _, form := range []url.Values{{"invoice": {invoice}}, {"invoice": {invoice}, "confirm": {"yes"}}} {
				if status, _, _ := boss.PostFrom("/dashboard/order?invoice="+invoice, "/dashboard/order/"+action, form); status != http.StatusNotFound {
					t.Errorf("POST %s %v: %d", action, form, status)
				}
			}
		}
	}
	if got := e.orderStatus(t, e.live, "INV-PAID"); got != recon.OrderCaptured {
		t.Errorf("INV-PAID is %s", got)
	}
	if got := e.orderStatus(t, e.live, "INV-OPEN"); got != recon.OrderAwaitingPayment {
		t.Errorf("INV-OPEN is %s", got)
	}
}
