package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// The dashboard's exceptions queue and notifications log (docs/dashboard.md)
// on a real server, both engines: lists, filters and pages, resolving by
// hand (a suggested order, a typed invoice, refund, ignore) and the IPN it
// causes, the delivery log with attempts, cURL and replays; roles, CSRF,
// tenants and modes, escaping, the note's limit.

// opsEnv is a dashEnv with exceptions in every tenant.
type opsEnv struct {
	*dashEnv
	live, test, other           recon.TenantID
	exc                         map[string]int64 // name → transaction id of a live exception
	testExc, otherExc           int64
	codeX1                      string
	otherDelivery, testDelivery int64
}

// exceptionOf finds the tenant's open exception of the amount.
func (e *opsEnv) exceptionOf(t *testing.T, tenant recon.TenantID, amount int64) int64 {
	t.Helper()
	list, _, err := e.db.Exceptions(context.Background(), tenant, recon.ExceptionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.Transaction.AmountIn == amount {
			return x.Transaction.ID
		}
	}
	t.Fatalf("no exception of %d in tenant.ID() %d: %v", amount, tenant.ID(), list)
	return 0
}

// deliveryOf finds the tenant's newest delivery of the event whose payload holds s.
func (e *opsEnv) deliveryOf(t *testing.T, tenant recon.TenantID, event, s string) *recon.Delivery {
	t.Helper()
	list, err := e.db.Deliveries(context.Background(), tenant, recon.DeliveryFilter{Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		if d.Event == event && strings.Contains(string(d.Payload), s) {
			return d
		}
	}
	t.Fatalf("no %s delivery with %q in tenant.ID() %d", event, s, tenant.ID())
	return nil
}

func newOpsEnv(t *testing.T, engine string) *opsEnv {
	t.Helper()
	ctx := context.Background()
	e := &opsEnv{dashEnv: newDashEnv(t, engine), exc: map[string]int64{}}
	for _, c := range []struct {
		company string
		live    bool
		dst     *recon.TenantID
	}{{e.dashEnv.live.company, true, &e.live}, {e.dashEnv.live.company, false, &e.test}, {e.dashEnv.other.company, true, &e.other}} {
		id, _ := parseID(c.company)
		tn, err := e.db.TenantOf(ctx, id, c.live)
		if err != nil {
			t.Fatal(err)
		}
		*c.dst = tn.ID
	}
	// Live exceptions: X1 (a typo of INV-EXC's code: suggested), X2 (a typo
	// for INV-TYPED, matched by its invoice), X3 (HTML in the memo), X4.
	e.codeX1 = e.checkout(t, e.dashEnv.live, "INV-EXC", 160000, "Thanh toán đơn hàng INV-EXC")
	e.pay(t, e.dashEnv.live, testkit.Typo(e.codeX1), 160000)
	typed := e.checkout(t, e.dashEnv.live, "INV-TYPED", 50000, "Thanh toán đơn hàng INV-TYPED")
	e.pay(t, e.dashEnv.live, testkit.Typo(typed), 50000)
	e.transfer(t, e.dashEnv.live, 4242, "DH99999999 "+htmlMemo)
	e.pay(t, e.dashEnv.live, "DH88888888", 999)
	for name, amount := range map[string]int64{"X1": 160000, "X2": 50000, "X3": 4242, "X4": 999} {
		e.exc[name] = e.exceptionOf(t, e.live, amount)
	}
	// Another company's exception and a test-mode one.
	oc := e.checkout(t, e.dashEnv.other, "INV-OX", 7000, "Thanh toán đơn hàng INV-OX")
	e.pay(t, e.dashEnv.other, testkit.Typo(oc), 7000)
	e.otherExc = e.exceptionOf(t, e.other, 7000)
	tc := e.checkout(t, e.dashEnv.test, "INV-TX", 7100, "Thanh toán đơn hàng INV-TX")
	e.pay(t, e.dashEnv.test, testkit.Typo(tc), 7100)
	e.testExc = e.exceptionOf(t, e.test, 7100)
	// Deliveries of the other company and of test mode (their ORDER_PAID).
	e.pay(t, e.dashEnv.other, oc, 7000)
	e.pay(t, e.dashEnv.test, tc, 7100)
	e.otherDelivery = e.deliveryOf(t, e.other, "ORDER_PAID", "INV-OX").ID
	e.testDelivery = e.deliveryOf(t, e.test, "ORDER_PAID", "INV-TX").ID
	return e
}

// TestDashboardOps runs the exceptions and notifications checks on one
// server per engine, in order.
func TestDashboardOps(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newOpsEnv(t, engine)
		for _, c := range []struct {
			name string
			fn   func(*testing.T, *opsEnv)
		}{{"ExceptionsRefused", opsExceptionsRefused}, {"Exceptions", opsExceptions}, {"Notifications", opsNotifications}} {
			if !t.Run(c.name, func(t *testing.T) { c.fn(t, e) }) {
				return
			}
		}
	})
}

// failingIPN pays a new order while the receiver answers 503, waits for
// the failed attempt of its ORDER_PAID, and brings the receiver back.
func (e *opsEnv) failingIPN(t *testing.T, invoice string) *recon.Delivery {
	t.Helper()
	e.rc.Answer(func(int) int { return http.StatusServiceUnavailable })
	code := e.checkout(t, e.dashEnv.live, invoice, 3000, "Thanh toán đơn hàng "+invoice)
	e.pay(t, e.dashEnv.live, code, 3000)
	failing := e.deliveryOf(t, e.live, "ORDER_PAID", invoice)
	testkit.WaitFor(t, "a failed attempt", 10*time.Second, func() bool {
		d, err := e.db.Delivery(context.Background(), e.live, failing.ID)
		return err == nil && d.Attempts > 0
	})
	e.rc.Answer(nil)
	return failing
}

func (e *opsEnv) excPath(name string) string {
	return fmt.Sprint("/dashboard/exceptions/", e.exc[name])
}

// stillOpen fails unless the live exception is open.
func (e *opsEnv) stillOpen(t *testing.T, name string) {
	t.Helper()
	x, err := e.db.Exception(context.Background(), e.live, e.exc[name])
	if err != nil || x.Resolution != nil {
		t.Fatalf("%s: %v %+v", name, err, x)
	}
}

// opsExceptionsRefused: everything that must not resolve an exception.
func opsExceptionsRefused(t *testing.T, e *opsEnv) {
	boss := e.signedIn(t, "boss@saomai.vn")
	x1 := e.excPath("X1")
	note := url.Values{"resolve": {"match:INV-EXC"}, "note": {"typo"}}

	// No CSRF token, a wrong one, another site.
	if status, _, _ := boss.Post(x1+"/resolve", note); status != http.StatusForbidden {
		t.Errorf("no token: %d", status)
	}
	bad := url.Values{"csrf": {"forged"}, "resolve": {"ignore"}, "note": {"x"}}
	if status, _, _ := boss.Post(x1+"/resolve", bad); status != http.StatusForbidden {
		t.Errorf("forged token: %d", status)
	}
	good := url.Values{"csrf": {boss.CSRF(x1)}, "resolve": {"ignore"}, "note": {"x"}}
	if resp, _ := boss.Do("POST", x1+"/resolve", good, map[string]string{"Sec-Fetch-Site": "cross-site"}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site: %d", resp.StatusCode)
	}

	// Bad forms: each a 400 naming the problem, shown on the page.
	for _, c := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"resolve": {"ignore"}, "note": {strings.Repeat("é", 300)}}, "Say why in the note (at most 500 bytes"},
		{url.Values{"resolve": {"ignore"}, "note": {"   "}}, "Say why in the note"},
		{url.Values{"resolve": {"match"}, "invoice": {"INV-NOPE"}, "note": {"x"}}, "Type the invoice number of an existing order"},
		{url.Values{"resolve": {"match"}, "invoice": {"INV-OTHER"}, "note": {"x"}}, "Type the invoice number of an existing order"},
		{url.Values{"resolve": {"match"}, "note": {"x"}}, "Type the invoice number"},
		{url.Values{"resolve": {"burn"}, "note": {"x"}}, "Choose a decision from the list"},
		{url.Values{"note": {"x"}}, "Choose a decision from the list"},
	} {
		status, _, body := boss.PostFrom(x1, x1+"/resolve", c.form)
		if status != http.StatusBadRequest || !strings.Contains(body, `id="resolve-error"`) || !strings.Contains(body, c.want) {
			t.Errorf("%v: %d, want 400 with %q in %s", c.form, status, c.want, body)
		}
	}
	// The typed note comes back in the form, escaped.
	_, _, body := boss.PostFrom(x1, x1+"/resolve", url.Values{"resolve": {"match"}, "note": {"<b>kept</b>"}})
	if !strings.Contains(body, "&lt;b&gt;kept&lt;/b&gt;</textarea>") {
		t.Errorf("the note is not kept, escaped: %s", body)
	}
	// Matching an underpaid/overpaid or an order already paid: the store's 409.
	status, _, body := boss.PostFrom(x1, x1+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"INV-PAID"}, "note": {"x"}})
	if status != http.StatusConflict || !strings.Contains(body, "That order is no longer awaiting payment") {
		t.Errorf("match to a paid order: %d %s", status, body)
	}

	// Another company's and the test mode's exceptions: 404, to read and to resolve.
	for _, id := range []int64{e.otherExc, e.testExc, 99999999} {
		p := fmt.Sprint("/dashboard/exceptions/", id)
		if status, _ := boss.Get(p); status != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, status)
		}
		if status, _, _ := boss.PostFrom(x1, p+"/resolve", url.Values{"resolve": {"ignore"}, "note": {"x"}}); status != http.StatusNotFound {
			t.Errorf("POST %s: %d", p, status)
		}
	}
	_, body = boss.Get("/dashboard/exceptions")
	if strings.Contains(body, "INV-OX") || strings.Contains(body, fmt.Sprint(`/dashboard/exceptions/`, e.testExc, `"`)) ||
		strings.Contains(body, fmt.Sprint(`/dashboard/exceptions/`, e.otherExc, `"`)) {
		t.Errorf("the live list shows another tenant's exception: %s", body)
	}

	// A Member sees nothing of it: no link, 403 to read and to resolve.
	member := e.signedIn(t, "nhanvien@saomai.vn")
	if _, body := member.Get("/dashboard/"); strings.Contains(body, "/dashboard/exceptions") || strings.Contains(body, "/dashboard/notifications") {
		t.Errorf("the member's home links exceptions or notifications: %s", body)
	}
	for _, p := range []string{"/dashboard/exceptions", x1, "/dashboard/notifications", fmt.Sprint("/dashboard/notifications/", e.otherDelivery)} {
		if status, _ := member.Get(p); status != http.StatusForbidden {
			t.Errorf("member GET %s: %d", p, status)
		}
	}
	if status, _, _ := member.PostFrom("/dashboard/", x1+"/resolve", url.Values{"resolve": {"ignore"}, "note": {"member"}}); status != http.StatusForbidden {
		t.Errorf("member's resolve: %d", status)
	}
	for _, name := range []string{"X1", "X2", "X3", "X4"} {
		e.stillOpen(t, name)
	}
}

// opsExceptions: the queue, its filters and pages, and each resolution.
func opsExceptions(t *testing.T, e *opsEnv) {
	boss := e.signedIn(t, "boss@saomai.vn")
	status, body := boss.Get("/dashboard/exceptions")
	if status != 200 || strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(&#34;memo&#34;)&lt;/script&gt;") {
		t.Fatalf("queue: %d %s", status, body)
	}
	for _, name := range []string{"X1", "X2", "X3", "X4"} {
		if !strings.Contains(body, `href="`+e.excPath(name)+`"`) {
			t.Errorf("the queue lacks %s", name)
		}
	}
	// Filters by the API's parser; pages by keyset.
	if status, body := boss.Get("/dashboard/exceptions?kind=overpaid"); status != 200 || strings.Contains(body, `href="/dashboard/exceptions/`) {
		t.Errorf("kind filter: %d", status)
	}
	for q, want := range map[string]string{"kind=nope": "kind must be one of", "bank_account_id=abc": "bank_account_id must be an integer",
		"from_date=2026-02-30": "from_date must be a date", "color=red": "unknown query parameter"} {
		if status, body := boss.Get("/dashboard/exceptions?" + q); status != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q", q, status, want)
		}
	}
	seen := map[string]bool{}
	page := "/dashboard/exceptions?limit=1&kind=unmatched&from_date="
	for i := 0; page != "" && i < 10; i++ {
		_, body := boss.Get(page)
		links := regexp.MustCompile(`href="/dashboard/exceptions/(\d+)"`).FindAllStringSubmatch(body, -1)
		if len(links) != 1 || seen[links[0][1]] {
			t.Fatalf("page %d: %v", i, links)
		}
		seen[links[0][1]] = true
		page = ""
		if m := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(body); m != nil {
			page = html.UnescapeString(m[1])
		}
	}
	if len(seen) != 5 { // X1-X4 and newDashEnv's transfer without a code
		t.Errorf("5 pages of one, got %d", len(seen))
	}

	// The detail: transfer, decision sentence, suggestions and why.
	x1 := e.excPath("X1")
	_, body = boss.Get(x1)
	for _, want := range []string{"no order with payment code " + testkit.Typo(e.codeX1), `id="suggestions"`, "INV-EXC",
		"its outstanding amount is this transfer&#39;s", "its payment code is close to the memo&#39;s", `id="resolve"`, `value="match:INV-EXC"`} {
		if !strings.Contains(body, want) {
			t.Errorf("X1's page lacks %q", want)
		}
	}

	// Match to the suggested order: the normal capture and IPN path.
	status, loc, _ := boss.Confirm(withQuery(x1+"/resolve", url.Values{"resolve": {"match:INV-EXC"}, "note": {"the payer swapped two digits"}}))
	if status != http.StatusSeeOther || loc != x1+"?order=INV-EXC" {
		t.Fatalf("match: %d %s", status, loc)
	}
	testkit.WaitFor(t, "ORDER_PAID of INV-EXC", 10*time.Second, func() bool {
		for _, p := range e.rc.IPNs("ORDER_PAID") {
			if p["order"].(map[string]any)["order_invoice_number"] == "INV-EXC" {
				return true
			}
		}
		return false
	})
	_, body = boss.Get(loc)
	for _, want := range []string{`id="resolution"`, "Matched to an order", "boss@saomai.vn", "the payer swapped two digits", `id="result"`,
		"Captured", "ORDER_PAID", "Rule: by hand"} {
		if !strings.Contains(body, want) {
			t.Errorf("after the match, X1 lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, `id="resolve"`) {
		t.Error("a resolved exception still has the form")
	}
	// Twice: the store's 409, shown.
	status, _, body = boss.PostFrom(x1, x1+"/resolve", url.Values{"resolve": {"ignore"}, "note": {"again"}, "confirm": {"yes"}})
	if status != http.StatusConflict || !strings.Contains(body, "Already resolved.") {
		t.Errorf("second resolution: %d %s", status, body)
	}
	if o := e.orderStatus(t, e.dashEnv.live, "INV-EXC"); o != recon.OrderCaptured {
		t.Errorf("INV-EXC: %v", o)
	}

	// An Accountant resolves too: an order typed by invoice, an ignore with
	// HTML in the note, a refund.
	acct := e.signedIn(t, "ketoan@saomai.vn")
	x2 := e.excPath("X2")
	if status, loc, body := acct.Confirm(withQuery(x2+"/resolve", url.Values{"resolve": {"match"}, "invoice": {" INV-TYPED "}, "note": {"typed by hand"}})); status != http.StatusSeeOther || loc != x2+"?order=INV-TYPED" {
		t.Fatalf("match by invoice: %d %s %s", status, loc, body)
	}
	x3 := e.excPath("X3")
	htmlNote := `<img src=x onerror=alert("note")>`
	if status, _, body := acct.Confirm(withQuery(x3+"/resolve", url.Values{"resolve": {"ignore"}, "note": {htmlNote}})); status != http.StatusSeeOther {
		t.Fatalf("ignore: %d %s", status, body)
	}
	_, body = acct.Get(x3)
	if strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;img src=x onerror=alert(&#34;note&#34;)&gt;") || !strings.Contains(body, "ketoan@saomai.vn") {
		t.Errorf("X3's note: %s", body)
	}
	x4 := e.excPath("X4")
	if status, _, _ := acct.Confirm(withQuery(x4+"/resolve", url.Values{"resolve": {"refund"}, "note": {"sent back by the bank"}})); status != http.StatusSeeOther {
		t.Fatalf("refund: %d", status)
	}
	// The resolved list shows them with who did what; the open list is empty.
	_, body = boss.Get("/dashboard/exceptions?status=resolved")
	for _, want := range []string{"Refunded outside Recon", "Ignored", "Matched to an order", "ketoan@saomai.vn"} {
		if !strings.Contains(body, want) {
			t.Errorf("resolved list lacks %q", want)
		}
	}
	_, body = boss.Get("/dashboard/exceptions")
	for _, name := range []string{"X1", "X2", "X3", "X4"} {
		if strings.Contains(body, `href="`+e.excPath(name)+`"`) {
			t.Errorf("the open list still has %s", name)
		}
	}
	// Vietnamese.
	boss.Do("GET", "/dashboard/lang/vi?back=/dashboard/exceptions", nil, nil)
	if _, body := boss.Get(x4); !strings.Contains(body, "Đã hoàn tiền ngoài Recon") || !strings.Contains(body, `lang="vi"`) {
		t.Errorf("Vietnamese exception: %s", body)
	}
	boss.Do("GET", "/dashboard/lang/en?back=/dashboard/exceptions", nil, nil)
}

// curlStandardSig is a real webhook-signature in a cURL command as the page
// writes it (html/template writes a base64 "+" as "&#43;").
var curlStandardSig = regexp.MustCompile(`webhook-signature: v1,(?:[A-Za-z0-9/]|&#43;){43}=`)

var curlSig = regexp.MustCompile(`X-Recon-Timestamp: (\d+)&#39; \\\n  -H &#39;X-Recon-Signature: (v1=[0-9a-f]{64})&#39;`)

// opsNotifications: the log, a delivery's page, cURL, replays, roles.
func opsNotifications(t *testing.T, e *opsEnv) {
	ctx := context.Background()
	boss := e.signedIn(t, "boss@saomai.vn")
	paid := e.deliveryOf(t, e.live, "ORDER_PAID", "INV-EXC")
	testkit.WaitFor(t, "INV-EXC's ORDER_PAID delivered", 10*time.Second, func() bool {
		d, err := e.db.Delivery(ctx, e.live, paid.ID)
		return err == nil && d.Status == recon.DeliveryDelivered
	})
	status, body := boss.Get("/dashboard/notifications")
	dpath := fmt.Sprint("/dashboard/notifications/", paid.ID)
	for _, want := range []string{`id="stats"`, "Payment IPN", `href="` + dpath + `"`, "ORDER_PAID"} {
		if !strings.Contains(body, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if status != 200 || strings.Contains(body, fmt.Sprint(`/dashboard/notifications/`, e.otherDelivery, `"`)) ||
		strings.Contains(body, fmt.Sprint(`/dashboard/notifications/`, e.testDelivery, `"`)) {
		t.Fatalf("log: %d, or another tenant's delivery: %s", status, body)
	}
	for q, want := range map[string]string{"status=lost": "status must be one of", "kind=sms": "kind must be one of", "before_id=-1": "before_id must be"} {
		if status, body := boss.Get("/dashboard/notifications?" + q); status != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want %q", q, status, want)
		}
	}
	if _, body := boss.Get("/dashboard/notifications?status=dead"); strings.Contains(body, `href="`+dpath+`"`) {
		t.Error("status filter")
	}

	// The delivery: payload indented, the attempt, a signed cURL that a
	// receiver accepts, no secret.
	_, body = boss.Get(dpath)
	for _, want := range []string{"\n  &#34;notification_type&#34;: &#34;ORDER_PAID&#34;", e.rc.URL + "/ipn", `id="replay"`, "curl -X POST &#39;" + e.rc.URL + "/ipn&#39;",
		"X-Secret-Key: &lt;SECRET_KEY", "X-Recon-Delivery: " + fmt.Sprint(paid.ID), "webhook-id: msg_" + fmt.Sprint(paid.ID)} {
		if !strings.Contains(body, want) {
			t.Errorf("delivery page lacks %q", want)
		}
	}
	if strings.Contains(body, "ipn-secret-0123456789") || strings.Contains(body, e.dashEnv.live.signingSecret) {
		t.Fatal("the delivery page shows a secret")
	}
	m := curlSig.FindStringSubmatch(body)
	if m == nil || !curlStandardSig.MatchString(body) {
		t.Fatalf("no signature in the cURL: %s", body)
	}
	if !strings.Contains(body, "--data-binary "+html.EscapeString(shellQuoted(string(paid.Payload)))) {
		t.Errorf("the cURL does not send the exact payload")
	}
	if err := delivery.Verify(e.dashEnv.live.signingSecret, m[1], m[2], paid.Payload, time.Now(), 5*time.Minute); err != nil {
		t.Errorf("the cURL's signature: %v", err)
	}

	// Replay one: sent again, same delivery id.
	if status, _, _ := boss.Post(dpath+"/replay", url.Values{}); status != http.StatusForbidden {
		t.Errorf("replay without a token: %d", status)
	}
	status, loc, _ := boss.Confirm(dpath + "/replay")
	if status != http.StatusSeeOther || loc != dpath+"?replayed=1" {
		t.Fatalf("replay: %d %s", status, loc)
	}
	testkit.WaitFor(t, "the replayed ORDER_PAID", 10*time.Second, func() bool {
		return e.rc.Seen(fmt.Sprint(paid.ID)) == 2
	})

	// Another tenant's and the other mode's deliveries: 404.
	for _, id := range []int64{e.otherDelivery, e.testDelivery} {
		p := fmt.Sprint("/dashboard/notifications/", id)
		if status, _ := boss.Get(p); status != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, status)
		}
		if status, _, _ := boss.PostFrom(dpath, p+"/replay", url.Values{}); status != http.StatusNotFound {
			t.Errorf("POST %s: %d", p, status)
		}
	}

	// Replay all failed since a time: an IPN fails once, then the receiver
	// is back; the failed one is sent at once instead of in a minute.
	failing := e.failingIPN(t, "INV-FAIL")
	if _, body := boss.Get("/dashboard/"); !strings.Contains(body, `href="/dashboard/notifications?status=failing"`) || !strings.Contains(body, `id="failing">1<`) {
		t.Errorf("home's failing link: %s", body)
	}
	for _, since := range []string{"", "yesterday"} {
		if status, _, body := boss.PostFrom("/dashboard/notifications", "/dashboard/notifications/replay", url.Values{"since": {since}}); status != http.StatusBadRequest || !strings.Contains(body, "since") {
			t.Errorf("since %q: %d", since, status)
		}
	}
	since := time.Now().Add(-time.Hour).Format("2006-01-02T15:04")
	status, loc, _ = boss.Confirm(withQuery("/dashboard/notifications/replay", url.Values{"since": {since}, "kind": {"ipn"}}))
	if status != http.StatusSeeOther || loc != "/dashboard/notifications?replayed=1" {
		t.Fatalf("replay failed: %d %s", status, loc)
	}
	testkit.WaitFor(t, "the failed ORDER_PAID sent again", 10*time.Second, func() bool {
		return e.rc.Seen(fmt.Sprint(failing.ID)) == 1
	})
	if _, body := boss.Get(loc); !strings.Contains(body, `id="replayed"`) {
		t.Error("no replay notice")
	}
	// The failed attempt is on the delivery's page with its status code.
	if _, body := boss.Get(fmt.Sprint("/dashboard/notifications/", failing.ID)); !strings.Contains(body, ">503<") || !strings.Contains(body, "HTTP 503") {
		t.Errorf("failed attempt: %s", body)
	}

	// An Accountant reads, with a placeholder signature, and may not replay.
	acct := e.signedIn(t, "ketoan@saomai.vn")
	_, body = acct.Get(dpath)
	if strings.Contains(body, `id="replay"`) || !strings.Contains(body, "X-Recon-Signature: v1=&lt;SIGNATURE") || curlSig.MatchString(body) ||
		!strings.Contains(body, "webhook-signature: v1,&lt;SIGNATURE") || curlStandardSig.MatchString(body) ||
		strings.Contains(body, "ipn-secret-0123456789") {
		t.Errorf("accountant's delivery page: %s", body)
	}
	if _, body := acct.Get("/dashboard/notifications"); strings.Contains(body, `id="replay-failed"`) {
		t.Error("the accountant is shown replay-failed")
	}
	if status, _, _ := acct.PostFrom(dpath, dpath+"/replay", url.Values{}); status != http.StatusForbidden {
		t.Errorf("accountant's replay: %d", status)
	}
	if status, _, _ := acct.PostFrom(dpath, "/dashboard/notifications/replay", url.Values{"since": {since}}); status != http.StatusForbidden {
		t.Errorf("accountant's replay failed: %d", status)
	}
}

// shellQuoted quotes s for a POSIX shell, as the cURL command must.
func shellQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
