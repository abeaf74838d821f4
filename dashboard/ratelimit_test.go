package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// anyPassword signs in any user it knows, whatever the password.
type anyPassword map[string]*recon.User

func (p anyPassword) VerifyPassword(_ context.Context, _ int64, email, _, _ string) (*recon.User, error) {
	if u := p[strings.ToLower(email)]; u != nil {
		return u, nil
	}
	return nil, recon.Errorf(recon.EUNAUTHORIZED, "wrong")
}

type answer struct {
	status int
	header http.Header
	body   string
}

// client is a browser of the test server: a cookie jar, a language.
type client struct {
	t    *testing.T
	base string
	c    *http.Client
	lang string
}

func newClient(t *testing.T, base, lang string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, lang: lang,
		c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *client) do(method, path string, form url.Values) answer {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, c.base+path, body)
	req.Header.Set("Accept-Language", c.lang)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(raw)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (c *client) signIn(company int64, email string) {
	c.t.Helper()
	m := csrfField.FindStringSubmatch(c.do("GET", "/dashboard/signin", nil).body)
	if m == nil {
		c.t.Fatal("no sign-in form")
	}
	got := c.do("POST", "/dashboard/signin", url.Values{"csrf": {m[1]}, "company": {fmt.Sprint(company)}, "email": {email}, "password": {"x"}})
	if got.status != http.StatusSeeOther {
		c.t.Fatalf("sign in: %d %s", got.status, got.body)
	}
}

// TestDashboardRateLimit: the dashboard limits each remote address (before
// sign-in too) and each signed-in session with token buckets, answers 429
// with Retry-After and a page in the user's language, and a search costs
// dashboard.SearchCost requests; time is the test's clock. Both engines
// (sessions are stored).
func TestDashboardRateLimit(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		db := dbtest.OpenStore(t, engine)
		co := &recon.Company{FullName: "Công ty TNHH Sao Mai", ShortName: "SAOMAI", Status: recon.CompanyActive, Subscription: "Business",
			BeginDate: "2026-01-01", EndDate: "2027-01-01", Config: recon.CompanyConfig{DataStorageDays: 365}}
		if err := db.CreateCompany(ctx, co); err != nil {
			t.Fatal(err)
		}
		users := anyPassword{}
		for _, email := range []string{"boss@saomai.vn", "ketoan@saomai.vn"} {
			u := &recon.User{CompanyID: co.ID, Email: email, Role: recon.RoleAdmin, PasswordHash: "x"}
			if err := db.CreateUser(ctx, u); err != nil {
				t.Fatal(err)
			}
			users[email] = u
		}
		clk := testkit.NewClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
		server := func(session, address *web.RateLimiter) string {
			mux := web.NewMux()
			(&dashboard.Handler{Store: db, Passwords: users, Sandbox: true, Clock: clk, Logger: slog.New(slog.DiscardHandler),
				SessionLimiter: session.WithClock(clk), AddressLimiter: address.WithClock(clk)}).Register(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			return srv.URL
		}

		t.Run("PerAddress", func(t *testing.T) {
			base := server(nil, web.NewRateLimiter(1, 5))
			c := newClient(t, base, "vi")
			for i := range 5 {
				if got := c.do("GET", "/dashboard/signin", nil); got.status != 200 {
					t.Fatalf("request %d: %d", i, got.status)
				}
			}
			// Before any sign-in: the address is refused, in Vietnamese.
			got := c.do("GET", "/dashboard/signin", nil)
			if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "1" ||
				!strings.Contains(got.body, "Phiên đăng nhập hoặc địa chỉ này gửi quá nhiều yêu cầu. Số giây cần chờ trước khi thử lại: 1.") {
				t.Fatalf("sixth request: %d %v %s", got.status, got.header, got.body)
			}
			// Another browser from the same address: the same bucket, even
			// for a sign-in.
			if got := newClient(t, base, "en").do("POST", "/dashboard/signin", url.Values{}); got.status != http.StatusTooManyRequests ||
				!strings.Contains(got.body, "Too many requests from this session or address.") {
				t.Fatalf("another browser's sign-in: %d %s", got.status, got.body)
			}
			clk.Advance(time.Second)
			if got := c.do("GET", "/dashboard/signin", nil); got.status != 200 {
				t.Fatalf("a second later: %d", got.status)
			}
		})

		t.Run("PerSession", func(t *testing.T) {
			base := server(web.NewRateLimiter(1, 10), nil)
			boss, ketoan := newClient(t, base, "en"), newClient(t, base, "en")
			boss.signIn(co.ID, "boss@saomai.vn")
			ketoan.signIn(co.ID, "ketoan@saomai.vn")
			for i := range 10 {
				if got := boss.do("GET", "/dashboard/", nil); got.status != 200 {
					t.Fatalf("request %d: %d %s", i, got.status, got.body)
				}
			}
			got := boss.do("GET", "/dashboard/", nil)
			if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "1" ||
				!strings.Contains(got.body, "Seconds to wait before trying again: 1.") || !strings.Contains(got.body, `id="who"`) {
				t.Fatalf("eleventh request: %d %v %s", got.status, got.header, got.body)
			}
			// A form too.
			if got := boss.do("POST", "/dashboard/signout", url.Values{}); got.status != http.StatusTooManyRequests {
				t.Fatalf("a form of the spent session: %d", got.status)
			}
			// Another session (same address) has its own bucket.
			if got := ketoan.do("GET", "/dashboard/", nil); got.status != 200 {
				t.Fatalf("another session: %d", got.status)
			}

			// A search costs SearchCost (5): two spend the full bucket, a
			// third waits 5 s, though a plain page (1) may go a second later.
			clk.Advance(time.Minute)
			search := "/dashboard/transactions?memo=DH1234"
			for i := range 2 {
				if got := boss.do("GET", search, nil); got.status != 200 {
					t.Fatalf("search %d: %d %s", i, got.status, got.body)
				}
			}
			if got := boss.do("GET", search, nil); got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "5" {
				t.Fatalf("third search: %d %v", got.status, got.header)
			}
			clk.Advance(time.Second)
			if got := boss.do("GET", "/dashboard/transactions", nil); got.status != 200 {
				t.Fatalf("the list, not a search, a second later: %d", got.status)
			}
			if got := boss.do("GET", search, nil); got.status != http.StatusTooManyRequests {
				t.Fatalf("a search a second later: %d", got.status)
			}
			clk.Advance(5 * time.Second)
			if got := boss.do("GET", search, nil); got.status != 200 {
				t.Fatalf("a search once 5 tokens are back: %d", got.status)
			}
		})
	})
}
