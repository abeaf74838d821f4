package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore"
)

// langAllow are the words of the English catalogue a Vietnamese page may
// show although no Vietnamese message uses them: the brand, technical
// tokens, and what the merchant or the payer wrote in the test's data.
var langAllow = []string{"recon", "saomai", "vn", "vietcombank", "sao", "mai", "cong", "ty", "tnhh", "nguyen", "van", "chuyen", "tien",
	"boss", "ketoan", "vietinbank", "an"}

var (
	// invisible are the elements whose text a reader does not read as
	// the page's language: scripts, styles, code (ids, JSON, cURL).
	invisible = regexp.MustCompile(`(?is)<(script|style|code|pre|textarea)\b.*?</(script|style|code|pre|textarea)>`)
	tag       = regexp.MustCompile(`(?s)<[^>]*>`)
	hrefs     = regexp.MustCompile(`href="(/dashboard/[^"#]*)"`)
	digits    = regexp.MustCompile(`[0-9]+|[0-9a-f]{8}-[0-9a-f-]{27}`)
	// fieldName is an API field or enum name shown as a label: ipn_url,
	// view_transactions, NumberOnly.
	dateTime  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}`)
	fieldName = regexp.MustCompile(`\b(?:[a-z]+(?:_[a-z]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+)\b`)
)

// visibleText is the page's text as a reader sees it: no tags, no
// attributes, no code.
func visibleText(page string) string {
	page = invisible.ReplaceAllString(page, " ")
	return html.UnescapeString(tag.ReplaceAllString(page, " "))
}

// TestDashboardVietnamese walks every page of the dashboard a signed-in
// Admin reaches by its links (from the home, on demo-like data: orders paid,
// short, over and twice, transfers naming no order, an exception resolved
// by hand, notifications delivered, the settings, the sandbox, the upload's
// refusal) in Vietnamese, and fails on a word of the English catalogue in a
// page's text (docs/dashboard.md, Language).
func TestDashboardVietnamese(t *testing.T) {
	t.Parallel()
	e := newLangEnv(t)
	b := e.signedIn(t, "boss@saomai.vn")
	b.Lang = "vi"
	english := dashboard.EnglishWords(langAllow...)
	seen := map[string]int{} // a page's shape (its path and query names, digits dropped): pages of it walked
	// The home, and pages a form's button (GET) opens rather than a link.
	queue := []string{"/dashboard/", "/dashboard/transactions?matched=unmatched", "/dashboard/transactions?matched=exception",
		// Filters refused (a typed or edited address).
		"/dashboard/transactions?matched=nope", "/dashboard/transactions?from_date=2026-13-01", "/dashboard/transactions?from_date=2026-10-02&to_date=2026-10-01",
		"/dashboard/transactions?memo=a&before=abc", "/dashboard/transactions?limit=0", "/dashboard/transactions?color=red",
		"/dashboard/order/void?invoice=SM-01126", "/dashboard/order/cancel?invoice=SM-01129", "/dashboard/notifications/1/replay",
		"/dashboard/notifications/replay?since=2026-01-01T00:00"}
	done := map[string]bool{}
	pages := 0
	for len(queue) > 0 && pages < 400 {
		p := queue[0]
		queue = queue[1:]
		status, body := b.Get(p)
		if status >= 500 {
			t.Errorf("GET %s: %d", p, status)
		}
		if status/100 == 3 || status >= 500 { // a redirect has no text; a refusal (400, 403, 404) has
			continue
		}
		pages++
		checkVietnamese(t, p, body, english)
		checkZone(t, p, body, e.loc)
		for _, m := range hrefs.FindAllStringSubmatch(body, -1) {
			next := html.UnescapeString(m[1])
			u, err := url.Parse(next)
			if err != nil || skipLink(u.Path) {
				continue
			}
			shape := digits.ReplaceAllString(u.Path, "N") + "?" + strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k := range u.Query() {
					if !yield(k) {
						return
					}
				}
			}), "&")
			if !done[next] && seen[shape] < 8 {
				seen[shape]++
				done[next] = true
				queue = append(queue, next)
			}
		}
	}
	t.Logf("walked %d pages: %v", pages, slices.Sorted(maps.Keys(seen)))
	if pages < 15 {
		t.Errorf("walked only %d pages: %v", pages, seen)
	}
	// Pages a link does not reach: the memo tester's answers.
	for _, memo := range []string{"CK DH12 va DH12345678 cho XDH1234567 roi DH87654321", "chuyen tien", "DH123456789012"} {
		_, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/try-memo", url.Values{"memo": {memo}})
		checkVietnamese(t, "the memo tester: "+memo, body, english)
	}
	// The statement upload's refusals: a header it does not know, bad rows;
	// and a page a role may not open.
	account := fmt.Sprint(e.live.account)
	for name, file := range map[string]string{
		"header":  "transaction_date,amount_in,transaction_content,reference_number,ghi_chu\n2026-09-17,1000,x,R0,y\n",
		"unknown": "Cột A,Cột B\n1,2\n",
		"rows": "transaction_date,amount_in,amount_out,transaction_content,reference_number\n2026-09-17 08:00:00,abc,,x,R1\n" +
			"2026-13-45 08:03:00,1000,,x,R2\n2026-09-17 08:00:00,1000,5,x,R3\n2026-09-17 08:00:00,,,x,R4\n2026-09-17 08:00:00,1000,,x,\n",
	} {
		status, body := uploadIn(b, account, "sao-ke.csv", file)
		if status != http.StatusBadRequest || !strings.Contains(body, `id="upload-error"`) {
			t.Errorf("upload %s: %d", name, status)
		}
		checkVietnamese(t, "the upload of "+name, body, english)
		if want := map[string]string{"header": "Không nhận ra cột <code>&#34;ghi_chu&#34;</code>", "rows": "Dòng 2: cột <code>amount_in</code> không phải là số tiền"}[name]; !strings.Contains(body, want) {
			t.Errorf("the upload of %s does not say %q: %s", name, want, body)
		}
	}
	member := e.signedIn(t, "ketoan@saomai.vn")
	member.Lang = "vi"
	for _, p := range []string{"/dashboard/settings", "/dashboard/sandbox"} {
		status, body := member.Get(p)
		if status != http.StatusForbidden {
			t.Errorf("the accountant's %s: %d", p, status)
		}
		checkVietnamese(t, "the accountant's "+p, body, english)
	}
	for _, p := range []string{"/dashboard/transactions/999999", "/dashboard/no-such-page"} {
		if status, body := b.Get(p); status != http.StatusNotFound {
			t.Errorf("%s: %d", p, status)
		} else {
			checkVietnamese(t, p, body, english)
		}
	}
}

// uploadIn posts a statement file as upload does, in the browser's language.
func uploadIn(b *testkit.Browser, account, name, content string) (int, string) {
	b.T.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("csrf", b.CSRF("/dashboard/bank-accounts"))
	_ = w.WriteField("account", account)
	f, _ := w.CreateFormFile("file", name)
	_, _ = f.Write([]byte(content))
	_ = w.Close()
	req, _ := http.NewRequest("POST", b.Base+"/dashboard/bank-accounts/statement", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("Origin", b.Base)
	req.Header.Set("Accept-Language", b.Lang)
	resp, err := b.Client.Do(req)
	if err != nil {
		b.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return resp.StatusCode, out.String()
}

func skipLink(path string) bool {
	for _, s := range []string{"/dashboard/lang/", "/dashboard/static/", "/dashboard/signout"} {
		if strings.HasPrefix(path, s) {
			return true
		}
	}
	for _, s := range []string{".csv", ".png", "/pdf", "/xml"} {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// checkZone fails on a time the page shows in UTC rather than in the
// business zone (Asia/Ho_Chi_Minh, UTC+7): every time of the test's data is
// of the last minutes, so one read in the business zone seven hours before
// now was written in UTC.
func checkZone(t *testing.T, path, page string, loc *time.Location) {
	t.Helper()
	now := time.Now()
	for _, s := range dateTime.FindAllString(visibleText(page), -1) {
		at, err := time.ParseInLocation("2006-01-02 15:04", strings.Replace(s, "T", " ", 1), loc)
		if err != nil {
			t.Errorf("%s: %q: %v", path, s, err)
			continue
		}
		if d := now.Sub(at); d > 6*time.Hour && d < 8*time.Hour {
			t.Errorf("%s shows %s, a time in UTC (now is %s in the business zone)", path, s, now.In(loc).Format("2006-01-02 15:04"))
		}
	}
}

// checkVietnamese fails on each English catalogue word in the page's text.
func checkVietnamese(t *testing.T, path, page string, english map[string]bool) {
	t.Helper()
	text := visibleText(page)
	found := map[string]bool{}
	for _, w := range fieldName.FindAllString(text, -1) {
		if !found[w] && !slices.Contains(langAllow, strings.ToLower(w)) {
			found[w] = true
			t.Errorf("%s shows the API name %q as a label", path, w)
		}
	}
	for _, w := range dashboard.Words(text) {
		if english[w] && !found[w] {
			found[w] = true
			i := regexp.MustCompile(`(?i)(^|[^\pL\pN])` + w + `($|[^\pL\pN])`).FindStringIndex(text)[0]
			t.Errorf("%s shows the English word %q: …%s…", path, w, strings.Join(strings.Fields(text[max(0, i-60):min(len(text), i+60)]), " "))
		}
	}
}

// newLangEnv is a server whose company has what every page shows: orders
// paid exactly, short, over and twice, an open one, a transfer naming no
// order and one with no code, an exception resolved by hand, notifications
// delivered.
func newLangEnv(t *testing.T) *dashEnv {
	t.Helper()
	e := newServer(t, sqlstore.EngineSQLite)
	rc := testkit.NewReceiver(t)
	e.rc = rc
	e.live = e.newCompany(t, rc.URL+"/ipn")
	e.userIDs["boss@saomai.vn"] = fmt.Sprint(e.dashUser(t, e.live, "boss@saomai.vn", recon.RoleAdmin))
	e.dashUser(t, e.live, "ketoan@saomai.vn", recon.RoleAccountant, recon.PermViewTransactions)
	paid := e.checkout(t, e.live, "SM-01126", 2467000, "Thanh toán đơn hàng SM-01126")
	e.pay(t, e.live, paid, 2467000)
	e.pay(t, e.live, paid, 2467000) // twice
	short := e.checkout(t, e.live, "SM-01127", 500000, "Áo sơ mi")
	e.pay(t, e.live, short, 200000)
	over := e.checkout(t, e.live, "SM-01128", 300000, "Quần tây")
	e.pay(t, e.live, over, 350000)
	e.checkout(t, e.live, "SM-01129", 90000, "Đơn hàng mở")
	e.checkout(t, e.live, "SM-01130", 120000, "Giày")
	e.transfer(t, e.live, 120000, "NGUYEN VAN A chuyen tien don SM01130")
	e.pay(t, e.live, "DH99999999", 45000) // names no order
	rc.Answer(func(n int) int {           // the second notification fails
		if n == 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	b := e.signedIn(t, "boss@saomai.vn")
	// Resolve the exception of 120000 by hand, matching SM-01130.
	list, _, err := e.db.Exceptions(context.Background(), e.live.id, recon.ExceptionFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range list {
		if x.Transaction.AmountIn == 120000 {
			p := fmt.Sprint("/dashboard/exceptions/", x.Transaction.ID)
			if status, _, body := b.PostFrom(p, p+"/resolve", url.Values{"resolve": {"match"}, "invoice": {"SM-01130"}, "note": {"Khách ghi sai mã"}, "confirm": {"yes"}}); status != http.StatusSeeOther {
				t.Fatalf("resolve: %d %s", status, body)
			}
		}
	}
	return e
}
