package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/orders"
	"recon/refunds"
	"recon/sqlstore/dbtest"
)

// receiver is a refund's receiver as the forms take it.
var receiver = url.Values{"bank_bin": {"970436"}, "account_number": {"0011223344"}, "account_name": {"NGUYEN VAN A"}}

// refundForm is the request form's fields: the target, the receiver, and more.
func refundForm(target, value string, more ...string) url.Values {
	f := url.Values{target: {value}, "reason": {"Khách trả hàng"}}
	for k, v := range receiver {
		f[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		f.Set(more[i], more[i+1])
	}
	return f
}

var refundPath = regexp.MustCompile(`^/dashboard/refunds/([0-9a-f-]{36})$`)

// TestDashboardRefunds: API v2's refunds in the dashboard, on a real server,
// both engines: an order's and a transaction's refundable amount and their
// request links; the request form with every rule refused in words, its
// confirmation (nothing written before confirm=yes), the refund's page with
// what the merchant sends and the receiver's VietQR; the approval threshold
// in the settings; four eyes (the requester sees no approval buttons and is
// refused, a second Admin approves or rejects, each through its
// confirmation); cancel; a Member and an Accountant refused; the list's
// filters; another company's and the test mode's refunds 404; a refund
// resolution with a receiver creating a refund.
func TestDashboardRefunds(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := context.Background()
		e.dashUser(t, e.live, "sep@saomai.vn", recon.RoleAdmin)
		boss, sep, acct, member := e.signedIn(t, "boss@saomai.vn"), e.signedIn(t, "sep@saomai.vn"), e.signedIn(t, "ketoan@saomai.vn"), e.signedIn(t, "nhanvien@saomai.vn")
		contains := func(what, body string, wants ...string) {
			t.Helper()
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %q: %s", what, w, body)
				}
			}
		}
		countRefunds := func() int64 {
			t.Helper()
			_, n, err := e.db.Refunds(ctx, e.live.id, recon.RefundFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		stateOf := func(id string) string {
			t.Helper()
			r, err := e.db.Refund(ctx, e.live.id, id)
			if err != nil {
				t.Fatal(err)
			}
			return r.Status
		}

		// The paid order's page: its v2 status, refundable, the request link;
		// the transfer's page likewise.
		_, body := boss.Get("/dashboard/order?invoice=INV-PAID")
		contains("INV-PAID", body, `id="v2-status">Paid<`, `id="refundable">150,000 VND<`, `href="/dashboard/refund/new?order=INV-PAID"`, `id="refunds">No refunds.<`)
		_, body = boss.Get("/dashboard/transactions/" + e.paidTx)
		contains("the paid transfer", body, `<a href="/dashboard/order?invoice=INV-PAID" class="decision-order">INV-PAID</a>`, `id="refundable">150,000 VND<`, `href="/dashboard/refund/new?transaction=`+e.paidTx+`"`)
		// The Accountant reads refunds but may not request one: no link, 403.
		_, body = acct.Get("/dashboard/order?invoice=INV-PAID")
		if strings.Contains(body, `id="request-refund"`) || !strings.Contains(body, `id="refundable"`) {
			t.Errorf("the Accountant's order page: %s", body)
		}
		if status, _ := acct.Get("/dashboard/refund/new?order=INV-PAID"); status != http.StatusForbidden {
			t.Errorf("the Accountant's request form: %d", status)
		}
		if status, _, _ := acct.PostFrom("/dashboard/", "/dashboard/refund/new", refundForm("order", "INV-PAID", "confirm", "yes")); status != http.StatusForbidden {
			t.Errorf("the Accountant's request: %d", status)
		}
		// A Member reads no money: no refunds at all.
		for _, p := range []string{"/dashboard/refunds", "/dashboard/refund/new?order=INV-PAID"} {
			if status, _ := member.Get(p); status != http.StatusForbidden {
				t.Errorf("Member GET %s: %d", p, status)
			}
		}

		// The form, and every refusal in words, nothing written.
		const form = "/dashboard/refund/new?order=INV-PAID"
		status, body := boss.Get(form)
		if status != http.StatusOK {
			t.Fatalf("the request form: %d %s", status, body)
		}
		contains("the form", body, `id="refundable">150,000 VND<`, `name="bank_bin"`)
		noReceiver := url.Values{"order": {"INV-PAID"}, "reason": {"x"}}
		for _, c := range []struct {
			form   url.Values
			status int
			want   string
		}{
			{noReceiver, http.StatusUnprocessableEntity, "Enter the receiver&#39;s account"},
			{refundForm("order", "INV-PAID", "amount", "200000"), http.StatusUnprocessableEntity, "The amount is more than what is left to refund."},
			{refundForm("order", "INV-PAID", "reason", ""), http.StatusBadRequest, "Say why the money goes back"},
			{refundForm("order", "INV-PAID", "amount", "-5"), http.StatusBadRequest, "The amount must be a whole number of VND"},
			{refundForm("order", "INV-PAID", "bank_bin", "12"), http.StatusBadRequest, "The bank&#39;s BIN is the 6 digits"},
		} {
			for _, confirm := range []string{"", "yes"} {
				f := url.Values{"confirm": {confirm}}
				for k, v := range c.form {
					f[k] = v
				}
				status, _, body := boss.PostFrom(form, "/dashboard/refund/new", f)
				if status != c.status || !strings.Contains(body, `id="refund-error"`) || !strings.Contains(body, c.want) {
					t.Errorf("request %v: %d, want %d and %q: %s", f, status, c.status, c.want, body)
				}
			}
		}
		// Another company's order and transfer, and an unknown one: 404.
		for _, f := range []url.Values{refundForm("order", "INV-OTHER"), refundForm("transaction", e.otherTx), refundForm("transaction", e.testTx), refundForm("order", "NO-SUCH")} {
			if status, _, _ := boss.PostFrom(form, "/dashboard/refund/new", f); status != http.StatusNotFound {
				t.Errorf("request for %v: %d", f, status)
			}
		}
		// The confirmation says what happens; only confirm=yes requests.
		first := refundForm("order", "INV-PAID", "amount", "50.000")
		status, _, body = boss.PostFrom(form, "/dashboard/refund/new", first)
		if status != http.StatusOK {
			t.Fatalf("the request's confirmation: %d %s", status, body)
		}
		contains("the request's confirmation", body, `id="c-invoice" class="memo">INV-PAID<`, `id="c-amount" class="memo">50,000 VND<`,
			`id="c-receiver" class="memo">0011223344 · NGUYEN VAN A · 970436<`, `id="c-after" class="memo">To send<`, `name="confirm" value="yes"`)
		if n := countRefunds(); n != 0 {
			t.Fatalf("%d refunds before the confirmation", n)
		}
		first.Set("confirm", "yes")
		status, loc, body := boss.PostFrom(form, "/dashboard/refund/new", first)
		m := refundPath.FindStringSubmatch(loc)
		if status != http.StatusSeeOther || m == nil {
			t.Fatalf("the confirmed request: %d %q %s", status, loc, body)
		}
		r1 := m[1]
		// The refund's page: what the merchant sends, with the VietQR.
		_, body = boss.Get(loc)
		contains("the refund's page", body, `id="status">To send<`, `id="amount">50,000 VND<`, `id="requested-by">boss@saomai.vn<`,
			`id="order-link">INV-PAID<`, `id="send-amount">50,000 VND<`, `id="send-from">Vietcombank 0071000123456<`,
			`src="/dashboard/refunds/`+r1+`/qr.png"`, `id="cancel"`)
		if !regexp.MustCompile(`id="send-memo"><strong>HT[0-9A-Z]{10}</strong>`).MatchString(body) {
			t.Errorf("the refund's memo: %s", body)
		}
		resp, png := boss.Do(http.MethodGet, loc+"/qr.png", nil, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(png, "\x89PNG") {
			t.Errorf("the refund's QR: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		_, body = boss.Get("/dashboard/order?invoice=INV-PAID")
		contains("INV-PAID after the refund", body, `id="refunded">50,000 VND<`, `id="refundable">100,000 VND<`, `href="/dashboard/refunds/`+r1+`"`)

		// The threshold: Admin only, refused words, saved.
		if status, _, _ := member.PostFrom("/dashboard/", "/dashboard/settings/refund-threshold", url.Values{"threshold": {"1"}}); status != http.StatusForbidden {
			t.Errorf("Member's threshold: %d", status)
		}
		for _, bad := range []string{"abc", "0", "-1", "99999999999999999999"} {
			status, _, body := boss.PostFrom("/dashboard/settings", "/dashboard/settings/refund-threshold", url.Values{"threshold": {bad}})
			if status != http.StatusBadRequest || !strings.Contains(body, `id="threshold-error"`) {
				t.Errorf("threshold %q: %d", bad, status)
			}
		}
		if status, loc, _ := boss.PostFrom("/dashboard/settings", "/dashboard/settings/refund-threshold", url.Values{"threshold": {"100000"}}); status != http.StatusSeeOther {
			t.Fatalf("threshold: %d %s", status, loc)
		}
		_, body = boss.Get("/dashboard/settings?saved=threshold")
		contains("the settings", body, `id="threshold-saved"`, `id="threshold-now">Now: <strong>100,000 VND<`)
		if v, _ := e.db.RefundApprovalThreshold(ctx, e.live.id); v != 100000 {
			t.Errorf("stored threshold %d", v)
		}

		// At the threshold the refund waits for another Admin.
		second := refundForm("order", "INV-PAID")
		_, _, body = boss.PostFrom(form, "/dashboard/refund/new", second)
		contains("the second request's confirmation", body, `id="c-amount" class="memo">100,000 VND<`, `id="c-after" class="memo">Waiting for approval<`)
		second.Set("confirm", "yes")
		_, loc, _ = boss.PostFrom(form, "/dashboard/refund/new", second)
		m = refundPath.FindStringSubmatch(loc)
		if m == nil {
			t.Fatalf("the second request: %q", loc)
		}
		r2 := m[1]
		_, body = boss.Get(loc)
		contains("the requester's page", body, `id="status">Waiting for approval<`, `id="approval-note">You requested this refund`)
		if strings.Contains(body, `id="approve"`) || strings.Contains(body, `id="reject"`) {
			t.Error("the requester sees the approval buttons")
		}
		for _, action := range []string{"approve", "reject"} {
			if status, _ := boss.Get(loc + "/" + action); status != http.StatusForbidden {
				t.Errorf("the requester's %s confirmation: %d", action, status)
			}
			if status, _, body := boss.PostFrom(loc, loc+"/"+action, url.Values{"confirm": {"yes"}}); status != http.StatusForbidden || !strings.Contains(body, "another Admin or SuperAdmin must approve") {
				t.Errorf("the requester's %s: %d %s", action, status, body)
			}
			if status, _, _ := acct.PostFrom("/dashboard/", loc+"/"+action, url.Values{"confirm": {"yes"}}); status != http.StatusForbidden {
				t.Errorf("the Accountant's %s: %d", action, status)
			}
		}
		if got := stateOf(r2); got != recon.RefundPendingApproval {
			t.Fatalf("after the refusals: %s", got)
		}
		// Nothing left to refund now.
		if status, _, body := boss.PostFrom(form, "/dashboard/refund/new", refundForm("order", "INV-PAID")); status != http.StatusUnprocessableEntity || !strings.Contains(body, "Everything received is already refunded") {
			t.Errorf("a third request: %d %s", status, body)
		}
		// The second Admin approves, through the confirmation.
		_, body = sep.Get(loc)
		contains("the second Admin's page", body, `<form method="get" action="`+loc+`/approve">`, `id="reject"`)
		if status, body = sep.Get(loc + "/approve"); status != http.StatusOK {
			t.Fatalf("the approval's confirmation: %d", status)
		}
		contains("the approval's confirmation", body, `id="c-after" class="memo">To send<`, `id="c-requested-by" class="memo">boss@saomai.vn<`)
		if status, _, body := sep.PostFrom(loc, loc+"/approve", url.Values{}); status != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("approve without the confirmation: %d", status)
		}
		if got := stateOf(r2); got != recon.RefundPendingApproval {
			t.Fatalf("after an unconfirmed approval: %s", got)
		}
		if status, _, body := sep.Confirm(loc + "/approve"); status != http.StatusSeeOther {
			t.Fatalf("approve: %d %s", status, body)
		}
		_, body = sep.Get(loc)
		contains("the approved refund", body, `id="status">To send<`, `id="decided-by">sep@saomai.vn<`)
		// Approving again: the state no longer allows it (422, in words).
		if status, _, body := sep.PostFrom(loc, loc+"/approve", url.Values{"confirm": {"yes"}}); status != http.StatusUnprocessableEntity || !strings.Contains(body, "no longer allows this") {
			t.Errorf("approving twice: %d %s", status, body)
		}

		// Cancel the first: its amount is refundable again.
		l1 := "/dashboard/refunds/" + r1
		if status, _, _ := boss.PostFrom(l1, l1+"/cancel", url.Values{}); status != http.StatusOK || stateOf(r1) != recon.RefundPending {
			t.Errorf("cancel without the confirmation: %d", status)
		}
		if status, _, body := boss.Confirm(l1 + "/cancel"); status != http.StatusSeeOther {
			t.Fatalf("cancel: %d %s", status, body)
		}
		if got := stateOf(r1); got != recon.RefundCancelled {
			t.Errorf("after cancel: %s", got)
		}
		// Its money leaving anyway is a refund_transfer exception: named in
		// the queue, and its page offers only to ignore it.
		svc := &refunds.Service{Store: e.db, Clock: recon.SystemClock{}, Location: e.loc}
		_, in, err := svc.SimulateSettlement(ctx, e.live.id, r1)
		if err != nil {
			t.Fatal(err)
		}
		_, body = boss.Get("/dashboard/exceptions?kind=refund_transfer")
		contains("the refund_transfer queue", body, "Refund transfer", fmt.Sprintf(`href="/dashboard/exceptions/%d"`, in.ID))
		rtx := fmt.Sprint("/dashboard/exceptions/", in.ID)
		_, body = boss.Get(rtx)
		contains("the refund_transfer exception", body, `id="refund-transfer-note"`, `id="pick-ignore"`)
		if strings.Contains(body, `id="pick-refund"`) || strings.Contains(body, `id="pick-invoice"`) {
			t.Errorf("the refund_transfer exception offers more than ignoring: %s", body)
		}
		if status, _, body := boss.Confirm(withQuery(rtx+"/resolve", url.Values{"resolve": {"ignore"}, "note": {"đã xử lý với ngân hàng"}})); status != http.StatusSeeOther {
			t.Errorf("ignoring the refund_transfer: %d %s", status, body)
		}
		// A refund by the transfer (the threshold lowered), rejected by the second Admin.
		if status, _, _ := boss.PostFrom("/dashboard/settings", "/dashboard/settings/refund-threshold", url.Values{"threshold": {"10.000"}}); status != http.StatusSeeOther {
			t.Fatalf("threshold 10000: %d", status)
		}
		txForm := "/dashboard/refund/new?transaction=" + e.paidTx
		third := refundForm("transaction", e.paidTx, "amount", "20000", "confirm", "yes")
		_, loc, _ = boss.PostFrom(txForm, "/dashboard/refund/new", third)
		m = refundPath.FindStringSubmatch(loc)
		if m == nil {
			t.Fatalf("the request by transfer: %q", loc)
		}
		r3 := m[1]
		if status, _, body := sep.Confirm(loc + "/reject"); status != http.StatusSeeOther {
			t.Fatalf("reject: %d %s", status, body)
		}
		if got := stateOf(r3); got != recon.RefundRejected {
			t.Errorf("after reject: %s", got)
		}
		_, body = boss.Get("/dashboard/transactions/" + e.paidTx)
		contains("the transfer's refunds", body, `href="/dashboard/refunds/`+r1+`"`, `href="/dashboard/refunds/`+r2+`"`, `href="/dashboard/refunds/`+r3+`"`, `id="refundable">50,000 VND<`)

		// The list: newest first, filters, refused filters in words.
		_, body = boss.Get("/dashboard/refunds")
		contains("the list", body, `id="total">3 refunds<`)
		if i3, i1 := strings.Index(body, r3), strings.Index(body, r1); i3 < 0 || i1 < 0 || i3 > i1 {
			t.Errorf("the list is not newest first: %s", body)
		}
		for q, want := range map[string][]string{"status=rejected": {r3}, "status=cancelled": {r1}, "order=INV-PAID": {r1, r2, r3}, "transaction=" + e.paidTx: {r1, r2, r3}} {
			_, body := boss.Get("/dashboard/refunds?" + q)
			for _, id := range []string{r1, r2, r3} {
				if want := strings.Contains(strings.Join(want, " "), id); strings.Contains(body, "/dashboard/refunds/"+id) != want {
					t.Errorf("?%s: %s listed %v", q, id, !want)
				}
			}
		}
		today := time.Now().In(e.loc).Format(recon.DateLayout)
		if _, body := boss.Get("/dashboard/refunds?from_date=" + today + "&to_date=" + today); !strings.Contains(body, `id="total">3 refunds<`) {
			t.Errorf("today's refunds: %s", body)
		}
		for q, want := range map[string]string{"status=bogus": "Choose a status", "order=NO-SUCH": "no order with this invoice", "from_date=2026-13-01": "YYYY-MM-DD", "transaction=x": "transaction&#39;s number"} {
			if status, body := boss.Get("/dashboard/refunds?" + q); status != http.StatusBadRequest || !strings.Contains(body, want) {
				t.Errorf("?%s: %d %s", q, status, body)
			}
		}

		// Another company's and the test mode's refunds are 404 everywhere.
		other, err := e.db.CreateRefund(ctx, e.other.id, &recon.RefundRequest{TransactionID: mustInt(t, e.otherTx), Reason: "x",
			Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "1", AccountName: "A"}, By: recon.RefundActor{ClientID: "c"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		testRefund, err := e.db.CreateRefund(ctx, e.test.id, &recon.RefundRequest{TransactionID: mustInt(t, e.testTx), Reason: "x",
			Receiver: recon.RefundReceiver{BankBIN: "970436", AccountNumber: "1", AccountName: "A"}, By: recon.RefundActor{ClientID: "c"}}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{other.ID, testRefund.ID, "not-an-id"} {
			p := "/dashboard/refunds/" + id
			for _, get := range []string{p, p + "/qr.png", p + "/cancel", p + "/approve"} {
				if status, _ := sep.Get(get); status != http.StatusNotFound {
					t.Errorf("GET %s: %d", get, status)
				}
			}
			for _, action := range []string{"cancel", "approve", "reject"} {
				if status, _, _ := sep.PostFrom("/dashboard/", p+"/"+action, url.Values{"confirm": {"yes"}}); status != http.StatusNotFound {
					t.Errorf("POST %s/%s: %d", p, action, status)
				}
			}
		}
		if r, _ := e.db.Refund(ctx, e.other.id, other.ID); r.Status != recon.RefundPending {
			t.Errorf("the other company's refund is %s", r.Status)
		}

		// An exception resolved as a refund with a receiver creates one.
		xid := e.transfer(t, e.live, 33000, "KHONG CO MA")
		xp := "/dashboard/exceptions/" + xid
		_, body = boss.Get(xp)
		contains("the exception", body, `name="account_number"`, "Refund the payer")
		res := url.Values{"resolve": {"refund"}, "note": {"khách chuyển nhầm"}, "amount": {"40000"}}
		for k, v := range receiver {
			res[k] = v
		}
		if status, body := boss.Get(withQuery(xp+"/resolve", res)); status != http.StatusUnprocessableEntity || !strings.Contains(body, "more than what is left to refund") {
			t.Errorf("a refund resolution beyond the transfer: %d %s", status, body)
		}
		res.Set("amount", "")
		_, body = boss.Get(withQuery(xp+"/resolve", res))
		contains("the refund resolution's confirmation", body, `id="c-refund-amount" class="memo">Everything refundable<`, `id="c-receiver" class="memo">0011223344 · NGUYEN VAN A · 970436<`)
		if status, _, body := boss.Confirm(withQuery(xp+"/resolve", res)); status != http.StatusSeeOther {
			t.Fatalf("the refund resolution: %d %s", status, body)
		}
		_, body = boss.Get(xp)
		rm := regexp.MustCompile(`href="/dashboard/refunds/([0-9a-f-]{36})" id="res-refund"`).FindStringSubmatch(body)
		if rm == nil {
			t.Fatalf("the resolved exception links no refund: %s", body)
		}
		xr, err := e.db.Refund(ctx, e.live.id, rm[1])
		if err != nil || xr.Amount != 33000 || xr.TransactionID != mustInt(t, xid) || xr.Reason != "khách chuyển nhầm" {
			t.Errorf("the resolution's refund: %+v %v", xr, err)
		}

		// The report: the transfers by outcome, the refunds by status and
		// those refunded or being refunded (r2 approved, the resolution's);
		// its CSV, one row per line. The other company's refund is not counted.
		status, body = boss.Get("/dashboard/report")
		if status != http.StatusOK {
			t.Fatalf("the report: %d %s", status, body)
		}
		contains("the report", body, `<tr id="rp-matched"><td>Matched, order paid</td><td class="num">1</td><td class="num">150,000 VND</td>`,
			`<tr id="rp-unmatched"><td>Unmatched</td><td class="num">2</td><td class="num">45,345 VND</td>`,
			`<tr id="rp-refunds-refunded"><td>Refunded or being refunded</td><td class="num">2</td><td class="num">133,000 VND</td>`,
			`<tr id="rp-refunds-cancelled"><td>Cancelled</td><td class="num">1</td><td class="num">50,000 VND</td>`,
			`<tr id="rp-refunds-rejected"><td>Rejected</td><td class="num">1</td><td class="num">20,000 VND</td>`)
		resp, csvBody := boss.Do(http.MethodGet, "/dashboard/report.csv?from_date="+today+"&to_date="+today, nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
			t.Fatalf("the report's CSV: %d", resp.StatusCode)
		}
		contains("the report's CSV", csvBody, "kind,name,count,amount\n", "transactions,matched,1,150000\n", "transactions,unmatched,2,45345\n",
			"refunds,refunded,2,133000\n", "refunds,pending_approval,1,33000\n", "refunds,pending,1,100000\n", "refunds,cancelled,1,50000\n", "refunds,succeeded,0,0\n")
		if status, _ := boss.Get("/dashboard/report?from_date=2026-02-30"); status != http.StatusBadRequest {
			t.Errorf("a report of a bad date: %d", status)
		}
		if status, _ := member.Get("/dashboard/report.csv"); status != http.StatusForbidden {
			t.Errorf("the Member's report: %d", status)
		}

		// In Vietnamese, no English text of the refunds' messages on any of
		// their pages (i18n_refunds.go; the page's main part, as typed data aside).
		sep.Lang = "vi"
		for _, p := range []string{"/dashboard/refunds", "/dashboard/refunds/" + r2, "/dashboard/refunds/" + r1, "/dashboard/refund/new?transaction=" + e.paidTx,
			"/dashboard/order?invoice=INV-PAID", "/dashboard/transactions/" + e.paidTx, "/dashboard/report", "/dashboard/settings", xp,
			"/dashboard/refunds?status=bogus", "/dashboard/refunds/" + r2 + "/cancel"} {
			status, body := sep.Get(p)
			main, _, _ := strings.Cut(body[strings.Index(body, `<main`):], "</main>")
			if status >= 500 || !strings.Contains(main, "</h1>") {
				t.Errorf("GET %s in Vietnamese: %d", p, status)
			}
			for _, en := range dashboard.RefundEnglish() {
				if strings.Contains(main, en) {
					t.Errorf("%s in Vietnamese shows %q", p, en)
				}
			}
		}
		if _, _, body := sep.PostFrom("/dashboard/refund/new?transaction="+e.paidTx, "/dashboard/refund/new", refundForm("transaction", e.paidTx, "amount", "999999")); !strings.Contains(body, "Số tiền lớn hơn số tiền còn có thể hoàn.") {
			t.Errorf("a refused rule in Vietnamese: %s", body)
		}
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := parseID(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDashboardOrderVAs: an API v2 order's page shows its v2 status,
// buyer, expiry and virtual accounts with their VietQR, both engines; the
// QR of another company's order is 404.
func TestDashboardOrderVAs(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		ctx := context.Background()
		svc := &orders.Service{Store: e.db, Clock: recon.SystemClock{}}
		in := 3600 * int64(2)
		v, err := svc.Create(ctx, e.live.id, recon.OrderInput{InvoiceNumber: "V2-001", Amount: 250000, BankAccountID: e.live.account,
			Buyer: &recon.Buyer{Name: "Trần Thị B", TaxCode: "0312345678"}, ExpiresIn: &in, VA: recon.VAInput{AmountMode: recon.VAExact}})
		if err != nil {
			t.Fatal(err)
		}
		va := v.VAs[0]
		if _, err := svc.Create(ctx, e.other.id, recon.OrderInput{InvoiceNumber: "V2-OTHER", Amount: 1000, BankAccountID: e.other.account}); err != nil {
			t.Fatal(err)
		}
		boss := e.signedIn(t, "boss@saomai.vn")
		status, body := boss.Get("/dashboard/order?invoice=V2-001")
		if status != http.StatusOK {
			t.Fatalf("V2-001: %d %s", status, body)
		}
		qrURL := "/dashboard/order/va-qr.png?" + url.Values{"invoice": {"V2-001"}, "va": {va.Number}}.Encode()
		for _, want := range []string{`id="v2-status">Pending<`, `id="buyer">Trần Thị B · tax code 0312345678<`, `id="expires-at">`,
			`<td class="memo">` + va.Number + `</td>`, "Memo code", "Exact", "250,000 VND", `>Active<`, `src="` + strings.ReplaceAll(qrURL, "&", "&amp;") + `"`} {
			if !strings.Contains(body, want) {
				t.Errorf("V2-001 lacks %q: %s", want, body)
			}
		}
		resp, png := boss.Do(http.MethodGet, qrURL, nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(png, "\x89PNG") {
			t.Errorf("the VA's QR: %d", resp.StatusCode)
		}
		for _, p := range []string{"/dashboard/order/va-qr.png?invoice=V2-OTHER&va=" + va.Number, "/dashboard/order/va-qr.png?invoice=V2-001&va=NOPE"} {
			if status, _ := boss.Get(p); status != http.StatusNotFound {
				t.Errorf("GET %s: %d", p, status)
			}
		}
		// Cancelled, the account shows so and has no QR.
		if _, err := svc.CancelVA(ctx, e.live.id, v.Order.PublicID, va.Number); err != nil {
			t.Fatal(err)
		}
		_, body = boss.Get("/dashboard/order?invoice=V2-001")
		if !strings.Contains(body, `>Cancelled<`) || strings.Contains(body, "va-qr.png") {
			t.Errorf("the cancelled account: %s", body)
		}
		if status, _ := boss.Get(qrURL); status != http.StatusNotFound {
			t.Errorf("the cancelled account's QR: %d", status)
		}
		// A transfer to the cancelled account is a va_inactive exception: named
		// in the queue, and its page offers a match like an unmatched one.
		x := e.transfer(t, e.live, 250000, "CK "+va.Number)
		_, body = boss.Get("/dashboard/exceptions?kind=va_inactive")
		if !strings.Contains(body, "Inactive virtual account") || !strings.Contains(body, `href="/dashboard/exceptions/`+x+`"`) {
			t.Errorf("the va_inactive queue: %s", body)
		}
		_, body = boss.Get("/dashboard/exceptions/" + x)
		if !strings.Contains(body, `id="pick-invoice"`) || !strings.Contains(body, `id="pick-refund"`) {
			t.Errorf("the va_inactive exception's form: %s", body)
		}
	})
}

// TestDashboardWithoutRefunds: a dashboard given no refunds or orders
// service hides them: no link, no sections, the pages and forms 404.
func TestDashboardWithoutRefunds(t *testing.T) {
	t.Parallel()
	e := newServer(t, "sqlite", func(h *dashboard.Handler) { h.Refunds, h.V2Orders = nil, nil })
	e.live = e.newCompany(t, "http://127.0.0.1:9/ipn")
	e.dashUser(t, e.live, "boss@saomai.vn", recon.RoleAdmin)
	tx := e.pay(t, e.live, e.checkout(t, e.live, "INV-PAID", 150000, "paid"), 150000)
	boss := e.signedIn(t, "boss@saomai.vn")
	for _, p := range []string{"/dashboard/order?invoice=INV-PAID", "/dashboard/transactions/" + tx, "/dashboard/settings", "/dashboard/"} {
		status, body := boss.Get(p)
		if status != http.StatusOK || strings.Contains(body, "refund/new") || strings.Contains(body, `id="nav-refunds"`) || strings.Contains(body, `id="vas"`) || strings.Contains(body, "refund-threshold") {
			t.Errorf("%s without refunds: %d %s", p, status, body)
		}
	}
	for _, p := range []string{"/dashboard/refunds", "/dashboard/refund/new?order=INV-PAID", "/dashboard/order/va-qr.png?invoice=INV-PAID&va=1"} {
		if status, _ := boss.Get(p); status != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, status)
		}
	}
	for _, p := range []string{"/dashboard/refund/new", "/dashboard/settings/refund-threshold"} {
		if status, _, _ := boss.PostFrom("/dashboard/settings", p, url.Values{"order": {"INV-PAID"}, "threshold": {"5"}, "confirm": {"yes"}}); status != http.StatusNotFound {
			t.Errorf("POST %s: %d", p, status)
		}
	}
}
