package dashboard_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// The dashboard (docs/dashboard.md) on a real server, both engines: sign-in
// and its throttle, sessions and their end, CSRF, roles, tenants and modes
// in URLs, escaping of what merchants and payers write.

// TestDashboard runs the dashboard's HTTP checks on one server per engine,
// in an order where each leaves what the next needs (the roles check, which
// demotes the admin and deactivates the company, last).
func TestDashboard(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newDashEnv(t, engine)
		for _, c := range []struct {
			name string
			fn   func(*testing.T, *dashEnv)
		}{{"SignIn", dashSignIn}, {"SessionExpiry", dashSessionExpiry}, {"TenantsAndModes", dashTenantsAndModes},
			{"Screens", dashScreens}, {"Roles", dashRoles}} {
			if !t.Run(c.name, func(t *testing.T) { c.fn(t, e) }) {
				return
			}
		}
	})
}

func dashSignIn(t *testing.T, e *dashEnv) {
	b := e.browser(t)
	// No session: to the sign-in page.
	resp, _ := b.Do("GET", "/dashboard/", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/signin" {
		t.Fatalf("home without a session: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := b.Do("GET", "/dashboard/signin", nil, nil)
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options":  "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY", "Cache-Control": "no-store",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Errorf("the sign-in page has a script: %s", body)
	}

	// Wrong password, unknown address: the same answer.
	for _, c := range []struct{ company, email, password string }{
		{e.live.company, "boss@saomai.vn", "wrong password"},
		{e.live.company, "nobody@saomai.vn", dashPassword},
	} {
		if status, body := b.SignIn(c.company, c.email, c.password); status != http.StatusUnauthorized || !strings.Contains(body, "The e-mail address or password is wrong.") {
			t.Errorf("sign in %v: %d %s", c, status, body)
		}
	}
	// The sign-in form without its token, with another token, from another site.
	token := b.CSRF("/dashboard/signin")
	good := url.Values{"csrf": {token}, "company": {e.live.company}, "email": {"boss@saomai.vn"}, "password": {dashPassword}}
	for name, c := range map[string]struct {
		form   url.Values
		header map[string]string
	}{
		"no token":     {url.Values{"company": {e.live.company}, "email": {"boss@saomai.vn"}, "password": {dashPassword}}, nil},
		"wrong token":  {url.Values{"csrf": {"x" + token}, "company": {e.live.company}, "email": {"boss@saomai.vn"}, "password": {dashPassword}}, nil},
		"cross-site":   {good, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		"other origin": {good, map[string]string{"Origin": "https://evil.example"}},
	} {
		resp, body := b.Do("POST", "/dashboard/signin", c.form, c.header)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" && strings.Contains(resp.Header.Get("Set-Cookie"), "recon_session=") {
			t.Errorf("%s: %d %s", name, resp.StatusCode, body)
		}
	}

	// The right password: a session cookie, HttpOnly, SameSite (not
	// Secure: the server runs with --sandbox on http).
	resp, _ = b.Do("POST", "/dashboard/signin", good, map[string]string{"Origin": e.base})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/" {
		t.Fatalf("sign in: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "recon_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteLaxMode || session.Path != "/" || len(session.Value) < 40 {
		t.Fatalf("session cookie %+v", session)
	}
	status, body := b.Get("/dashboard/")
	if status != 200 || !strings.Contains(body, "boss@saomai.vn") {
		t.Fatalf("home: %d %s", status, body)
	}
	// The database keeps only the token's hash.
	db := e.db
	var n int
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM dashboard_sessions WHERE token_hash = $1`, []byte(session.Value)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the raw token is stored: %d %v", n, err)
	}

	// Sign-out needs the token too, then deletes the session: the old
	// cookie no longer works.
	if status, _, _ := b.Post("/dashboard/signout", url.Values{}); status != http.StatusForbidden {
		t.Fatalf("sign-out without a token: %d", status)
	}
	if status, loc, _ := b.PostFrom("/dashboard/", "/dashboard/signout", url.Values{}); status != http.StatusSeeOther || loc != "/dashboard/signin" {
		t.Fatalf("sign-out: %d %s", status, loc)
	}
	stale := e.browser(t)
	stale.Client.Jar.SetCookies(mustURL(t, e.base), []*http.Cookie{{Name: "recon_session", Value: session.Value, Path: "/"}})
	resp, _ = stale.Do("GET", "/dashboard/transactions", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/signin?ended=1" {
		t.Fatalf("after sign-out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if status, body := stale.Get("/dashboard/signin?ended=1"); status != 200 || !strings.Contains(body, "Your session has ended") {
		t.Fatalf("ended page: %d", status)
	}
	// A POST with an ended session is refused, not redirected.
	if resp, _ := stale.Do("POST", "/dashboard/mode", url.Values{"mode": {"test"}}, map[string]string{"Origin": e.base}); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST after sign-out: %d", resp.StatusCode)
	}
}

// TestDashboardThrottle: failed sign-ins slow down and then lock the
// account, sharing the OAuth login page's throttle; while locked, even the
// right password is refused without being checked.
func TestDashboardThrottle(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		// A light setup: the throttle needs a company and two users.
		e := newServer(t, engine)
		e.live = e.newCompany(t, "https://shop.example.vn/ipn")
		for _, email := range []string{"ketoan@saomai.vn", "boss@saomai.vn"} {
			e.dashUser(t, e.live, email, recon.RoleAccountant)
		}
		b := e.browser(t)
		// wrongUntilThrottled fails sign-ins until one is throttled (the
		// 4th failure makes the next attempt wait 1 s, growing from there).
		wrongUntilThrottled := func() {
			t.Helper()
			for i := 0; i < 8; i++ {
				status, body := b.SignIn(e.live.company, "ketoan@saomai.vn", "wrong password")
				switch status {
				case http.StatusUnauthorized:
				case http.StatusTooManyRequests:
					if !strings.Contains(body, "Too many failed sign-ins.") || !strings.Contains(body, "try again in") {
						t.Fatalf("throttled page: %s", body)
					}
					return
				default:
					t.Fatalf("attempt %d: %d %s", i, status, body)
				}
			}
			t.Fatal("8 wrong passwords and no throttle")
		}
		// While the wait holds, even the right password is refused without
		// being checked. (Should the machine be so slow that the wait has
		// passed, the right password signs in and resets the account: one
		// more round.)
		refused := false
		for round := 0; round < 2 && !refused; round++ {
			wrongUntilThrottled()
			status, _ := b.SignIn(e.live.company, "ketoan@saomai.vn", dashPassword)
			refused = status == http.StatusTooManyRequests
			if !refused && status != http.StatusSeeOther {
				t.Fatalf("right password: %d", status)
			}
		}
		if !refused {
			t.Fatal("the right password was let through right after a throttled attempt, twice")
		}
		// Another account from the same address is not locked.
		if status, body := b.SignIn(e.live.company, "boss@saomai.vn", dashPassword); status != http.StatusSeeOther {
			t.Fatalf("another account: %d %s", status, body)
		}
	})
}

// TestDashboardSessionExpiry: a session past its absolute end, or idle too
// long, sends the browser to sign in again, and the row is gone.
func dashSessionExpiry(t *testing.T, e *dashEnv) {
	db := e.db
	company, _ := parseID(e.live.company)
	user, _ := parseID(e.userIDs["boss@saomai.vn"])
	now := time.Now()
	for name, s := range map[string]recon.DashboardSession{
		"expired": {CreatedAt: now.Add(-13 * time.Hour), LastSeenAt: now.Add(-time.Minute), ExpiresAt: now.Add(-time.Hour)},
		"idle":    {CreatedAt: now.Add(-2 * time.Hour), LastSeenAt: now.Add(-31 * time.Minute), ExpiresAt: now.Add(10 * time.Hour)},
	} {
		token := "token-of-the-" + name + "-session-0123456789abcdef"
		s.UserID, s.Company, s.Live = user, company, true
		if err := db.CreateDashboardSession(context.Background(), &s, sha256Sum(token)); err != nil {
			t.Fatal(err)
		}
		b := e.browser(t)
		b.Client.Jar.SetCookies(mustURL(t, e.base), []*http.Cookie{{Name: "recon_session", Value: token, Path: "/"}})
		resp, _ := b.Do("GET", "/dashboard/", nil, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/dashboard/signin?ended=1" {
			t.Errorf("%s session: %d %s", name, resp.StatusCode, resp.Header.Get("Location"))
		}
		if _, err := db.DashboardSession(context.Background(), sha256Sum(token), now.Add(-time.Hour), time.Hour); recon.ErrorCode(err) != recon.EUNAUTHORIZED {
			t.Errorf("%s session still stored: %v", name, err)
		}
	}
}

// TestDashboardRoles: what each role sees and may press, applied from the
// next request after a change; a deactivated company is shut out at once.
func dashRoles(t *testing.T, e *dashEnv) {
	money := []string{"/dashboard/transactions", "/dashboard/transactions/" + e.paidTx, "/dashboard/transactions.csv",
		"/dashboard/orders", "/dashboard/order?invoice=INV-PAID"}

	member := e.signedIn(t, "nhanvien@saomai.vn")
	status, body := member.Get("/dashboard/")
	if status != 200 || !strings.Contains(body, "Your role does not show money data") || strings.Contains(body, "VND") ||
		strings.Contains(body, `href="/dashboard/transactions"`) {
		t.Fatalf("member's home: %d %s", status, body)
	}
	for _, p := range money {
		if status, body := member.Get(p); status != http.StatusForbidden || !strings.Contains(body, "View transactions") {
			t.Errorf("member GET %s: %d", p, status)
		}
	}

	e.checkout(t, e.live, "INV-ROLES", 1000, "Thanh toán đơn hàng INV-ROLES")
	acct := e.signedIn(t, "ketoan@saomai.vn")
	for _, p := range money {
		if status, _ := acct.Get(p); status != 200 {
			t.Errorf("accountant GET %s: %d", p, status)
		}
	}
	if _, body := acct.Get("/dashboard/order?invoice=INV-PAID"); strings.Contains(body, `id="void"`) {
		t.Error("the accountant is shown the void button")
	}
	status, _, body = acct.PostFrom("/dashboard/", "/dashboard/order/void", url.Values{"invoice": {"INV-PAID"}})
	if status != http.StatusForbidden || !strings.Contains(body, "it needs an Admin") {
		t.Fatalf("accountant's void: %d %s", status, body)
	}
	status, _, _ = acct.PostFrom("/dashboard/", "/dashboard/order/cancel", url.Values{"invoice": {"INV-ROLES"}})
	if status != http.StatusForbidden {
		t.Fatalf("accountant's cancel: %d", status)
	}
	if o := e.orderStatus(t, e.live, "INV-ROLES"); o != recon.OrderAwaitingPayment {
		t.Fatalf("a refused cancel changed the order: %v", o)
	}

	// The admin sees the buttons; a demotion applies at the next request.
	boss := e.signedIn(t, "boss@saomai.vn")
	if _, body := boss.Get("/dashboard/order?invoice=INV-ROLES"); !strings.Contains(body, `id="cancel"`) {
		t.Fatal("the admin is not shown the cancel button")
	}
	token := boss.CSRF("/dashboard/order?invoice=INV-ROLES")
	boss0, _ := parseID(e.userIDs["boss@saomai.vn"]) // as `recon user update ID --company --role Member`
	if err := e.db.SetUserRole(context.Background(), e.live.id.ID(), boss0, recon.RoleMember, nil); err != nil {
		t.Fatal(err)
	}
	if status, _ := boss.Get("/dashboard/transactions"); status != http.StatusForbidden {
		t.Fatalf("demoted admin: %d", status)
	}
	if status, _, _ := boss.Post("/dashboard/order/cancel", url.Values{"csrf": {token}, "invoice": {"INV-ROLES"}}); status != http.StatusForbidden {
		t.Fatalf("demoted admin's cancel: %d", status)
	}

	// A deactivated company: every page is refused.
	if _, err := e.db.UpdateCompany(context.Background(), e.live.id.ID(), func(c *recon.Company) error { c.Status = recon.CompanyInactive; return nil }); err != nil {
		t.Fatal(err)
	}
	if status, body := acct.Get("/dashboard/"); status != http.StatusForbidden || !strings.Contains(body, "inactive") {
		t.Fatalf("inactive company: %d %s", status, body)
	}
	if status, _ := e.browser(t).SignIn(e.live.company, "ketoan@saomai.vn", dashPassword); status != http.StatusForbidden {
		t.Fatalf("sign in to an inactive company: %d", status)
	}
}

// TestDashboardTenantsAndModes: another company's ids and invoices are 404;
// a session in test mode sees only test data, and the reverse.
func dashTenantsAndModes(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")
	for _, p := range []string{"/dashboard/transactions/" + e.otherTx, "/dashboard/order?invoice=INV-OTHER",
		"/dashboard/transactions/" + e.testTx, "/dashboard/transactions/99999999", "/dashboard/transactions/abc", "/dashboard/nothing"} {
		if status, body := b.Get(p); status != http.StatusNotFound {
			t.Errorf("live GET %s: %d %s", p, status, body)
		}
	}
	_, body := b.Get("/dashboard/transactions")
	if strings.Contains(body, "TEST-ONLY MEMO") || strings.Contains(body, "OTHER COMPANY") || strings.Contains(body, "test-banner") {
		t.Fatalf("live list shows test or other data: %s", body)
	}
	if status, _, _ := b.PostFrom("/dashboard/", "/dashboard/order/void", url.Values{"invoice": {"INV-OTHER"}}); status != http.StatusNotFound {
		t.Fatalf("void of another company's order: %d", status)
	}

	// Switch to test mode, from the transactions list: back to it.
	status, loc, _ := b.PostFrom("/dashboard/transactions", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/transactions"}})
	if status != http.StatusSeeOther || loc != "/dashboard/transactions" {
		t.Fatalf("switch: %d %s", status, loc)
	}
	status, body = b.Get("/dashboard/transactions")
	if status != 200 || !strings.Contains(body, "TEST MODE") || !strings.Contains(body, "TEST-ONLY MEMO") ||
		strings.Contains(body, "memo") && strings.Contains(body, "&lt;script&gt;") || !strings.Contains(body, `id="total">1 transfer`) {
		t.Fatalf("test list: %d %s", status, body)
	}
	for _, p := range []string{"/dashboard/transactions/" + e.paidTx, "/dashboard/order?invoice=INV-PAID"} {
		if status, _ := b.Get(p); status != http.StatusNotFound {
			t.Errorf("test GET %s (live): %d", p, status)
		}
	}
	if status, _ := b.Get("/dashboard/transactions/" + e.testTx); status != 200 {
		t.Errorf("test transaction in test mode: %d", status)
	}
	// Every page of test mode has the banner; the home shows only test money.
	_, body = b.Get("/dashboard/")
	if !strings.Contains(body, `id="test-banner"`) || !strings.Contains(body, "777 VND") || strings.Contains(body, "150,000 VND") {
		t.Fatalf("test home: %s", body)
	}
	// A back outside the dashboard is not followed.
	_, loc, _ = b.PostFrom("/dashboard/", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"https://evil.example/"}})
	if loc != "/dashboard/" {
		t.Fatalf("back to %s", loc)
	}
	_, body = b.Get("/dashboard/")
	if strings.Contains(body, "test-banner") || !strings.Contains(body, "150,000 VND") {
		t.Fatalf("live home after switching back: %s", body)
	}
}

// TestDashboardScreens: what each screen shows, filters, the CSV export,
// escaping, and void and cancel from the UI.
func dashScreens(t *testing.T, e *dashEnv) {
	b := e.signedIn(t, "boss@saomai.vn")

	_, home := b.Get("/dashboard/")
	for _, want := range []string{`id="today"`, "162,345 VND", "150,000 VND", "<svg", `id="failing"`} {
		if !strings.Contains(home, want) {
			t.Errorf("home lacks %q", want)
		}
	}
	// Transactions: HTML in a memo is text.
	status, body := b.Get("/dashboard/transactions")
	if status != 200 || strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") ||
		!strings.Contains(body, "&lt;script&gt;alert(&#34;memo&#34;)&lt;/script&gt;") {
		t.Fatalf("transactions: %d %s", status, body)
	}
	if !strings.Contains(body, `id="total">2 transfers`) {
		t.Errorf("live total: %s", body)
	}
	// The API's filters, by the API's rules.
	if _, body := b.Get("/dashboard/transactions?amount_in=12345&account_number=&from_date="); !strings.Contains(body, `id="total">1 transfer`) {
		t.Errorf("amount filter: %s", body)
	}
	if status, body := b.Get("/dashboard/transactions?from_date=2026-13-01"); status != http.StatusBadRequest || !strings.Contains(body, "from_date must be a date") {
		t.Errorf("bad date: %d", status)
	}
	if status, body := b.Get("/dashboard/transactions?limit=1"); status != 200 || !strings.Contains(body, `rel="next"`) || !strings.Contains(body, "Page 1 / 2") {
		t.Errorf("pages: %d %s", status, body)
	}
	// The transaction's decision and its sentence.
	_, body = b.Get("/dashboard/transactions/" + e.paidTx)
	if !strings.Contains(body, "names order INV-PAID: 150,000 VND of 150,000 VND paid") {
		t.Errorf("transaction detail: %s", body)
	}
	// CSV: the filtered list, a formula defused.
	e.transfer(t, e.live, 1, `=HYPERLINK("http://evil")`)
	resp, raw := b.Do("GET", "/dashboard/transactions.csv", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("csv: %d %s", resp.StatusCode, raw)
	}
	recs, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
	if err != nil || len(recs) != 4 || recs[0][7] != "transaction_content" {
		t.Fatalf("csv rows %v %v", recs, err)
	}
	if recs[1][7] != `'=HYPERLINK("http://evil")` {
		t.Errorf("formula not defused: %q", recs[1][7])
	}
	resp, raw = b.Do("GET", "/dashboard/transactions.csv?amount_in=12345", nil, nil)
	if recs, _ := csv.NewReader(strings.NewReader(raw)).ReadAll(); resp.StatusCode != 200 || len(recs) != 2 || recs[1][7] != htmlMemo {
		t.Errorf("filtered csv: %d %v", resp.StatusCode, recs)
	}

	// Orders: filter, HTML in a description, the timeline.
	_, body = b.Get("/dashboard/orders?order_status=CAPTURED")
	if !strings.Contains(body, "INV-PAID") || strings.Contains(body, "INV-OPEN") {
		t.Errorf("status filter: %s", body)
	}
	_, body = b.Get("/dashboard/orders")
	if strings.Contains(body, `<b onmouseover`) || !strings.Contains(body, "&lt;b onmouseover=&#34;x()&#34;&gt;") {
		t.Errorf("description not escaped: %s", body)
	}
	if status, body := b.Get("/dashboard/orders?order_status=NOPE"); status != http.StatusBadRequest || !strings.Contains(body, "order_status must be one of") {
		t.Errorf("bad status: %d", status)
	}
	_, body = b.Get("/dashboard/order?invoice=INV-PAID")
	for _, want := range []string{"Order created", "Captured", "ORDER_PAID", "names order INV-PAID"} {
		if !strings.Contains(body, want) {
			t.Errorf("order page lacks %q", want)
		}
	}
	// Void from the UI: the gateway's void, with its IPN.
	status, loc, _ := b.Confirm("/dashboard/order/void?invoice=INV-PAID")
	if status != http.StatusSeeOther || loc != "/dashboard/order?invoice=INV-PAID" {
		t.Fatalf("void: %d %s", status, loc)
	}
	_, body = b.Get(loc)
	if !strings.Contains(body, "Voided") || !strings.Contains(body, "TRANSACTION_VOID") || strings.Contains(body, `id="void"`) {
		t.Errorf("after void: %s", body)
	}
	// Void again: the gateway's 409, shown on the order.
	status, _, body = b.PostFrom("/dashboard/order?invoice=INV-PAID", "/dashboard/order/void", url.Values{"invoice": {"INV-PAID"}})
	if status != http.StatusConflict || !strings.Contains(body, `id="action-error"`) {
		t.Errorf("second void: %d %s", status, body)
	}
	// Cancel an unpaid order.
	if status, _, _ := b.Confirm("/dashboard/order/cancel?invoice=INV-OPEN"); status != http.StatusSeeOther {
		t.Fatalf("cancel: %d", status)
	}
	if o := e.orderStatus(t, e.live, "INV-OPEN"); o != recon.OrderCancelled {
		t.Fatalf("cancelled order: %v", o)
	}
	// Vietnamese.
	if resp, _ := b.Do("GET", "/dashboard/lang/vi?back=/dashboard/orders", nil, nil); resp.Header.Get("Location") != "/dashboard/orders" {
		t.Fatalf("language switch: %s", resp.Header.Get("Location"))
	}
	if _, body := b.Get("/dashboard/orders"); !strings.Contains(body, `lang="vi"`) || !strings.Contains(body, "Đơn hàng") || !strings.Contains(body, "150.000 ₫") {
		t.Errorf("Vietnamese orders page: %s", body)
	}
}
