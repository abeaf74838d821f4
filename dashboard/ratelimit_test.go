package dashboard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
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

func (p anyPassword) VerifyEmailPassword(ctx context.Context, email, password, address string) ([]*recon.User, error) {
	u, err := p.VerifyPassword(ctx, 0, email, password, address)
	if err != nil {
		return nil, err
	}
	return []*recon.User{u}, nil
}

type answer struct {
	status int
	header http.Header
	body   string
}

// newClient is a browser of the test server in lang.
func newClient(t *testing.T, base, lang string) *testkit.Browser {
	b := testkit.NewBrowser(t, base)
	b.Lang = lang
	return b
}

// do sends a request from the server's own pages and returns the answer.
func do(c *testkit.Browser, method, path string, form url.Values) answer {
	c.T.Helper()
	resp, body := c.Do(method, path, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
	return answer{resp.StatusCode, resp.Header, body}
}

// signIn signs in as email (any password does, anyPassword).
func signIn(c *testkit.Browser, company int64, email string) {
	c.T.Helper()
	if status, body := c.SignIn(fmt.Sprint(company), email, "x"); status != http.StatusSeeOther {
		c.T.Fatalf("sign in: %d %s", status, body)
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
			u := &recon.User{Company: co.ID, Email: email, Role: recon.RoleAdmin, PasswordHash: "x"}
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
				if got := do(c, "GET", "/dashboard/signin", nil); got.status != 200 {
					t.Fatalf("request %d: %d", i, got.status)
				}
			}
			// Before any sign-in: the address is refused, in Vietnamese.
			got := do(c, "GET", "/dashboard/signin", nil)
			if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "1" ||
				!strings.Contains(got.body, "Phiên đăng nhập hoặc địa chỉ này gửi quá nhiều yêu cầu. Số giây cần chờ trước khi thử lại: 1.") {
				t.Fatalf("sixth request: %d %v %s", got.status, got.header, got.body)
			}
			// Another browser from the same address: the same bucket, even
			// for a sign-in.
			if got := do(newClient(t, base, "en"), "POST", "/dashboard/signin", url.Values{}); got.status != http.StatusTooManyRequests ||
				!strings.Contains(got.body, "Too many requests from this session or address.") {
				t.Fatalf("another browser's sign-in: %d %s", got.status, got.body)
			}
			clk.Advance(time.Second)
			if got := do(c, "GET", "/dashboard/signin", nil); got.status != 200 {
				t.Fatalf("a second later: %d", got.status)
			}
		})

		t.Run("PerSession", func(t *testing.T) {
			base := server(web.NewRateLimiter(1, 10), nil)
			boss, ketoan := newClient(t, base, "en"), newClient(t, base, "en")
			signIn(boss, co.ID, "boss@saomai.vn")
			signIn(ketoan, co.ID, "ketoan@saomai.vn")
			for i := range 10 {
				if got := do(boss, "GET", "/dashboard/", nil); got.status != 200 {
					t.Fatalf("request %d: %d %s", i, got.status, got.body)
				}
			}
			got := do(boss, "GET", "/dashboard/", nil)
			if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "1" ||
				!strings.Contains(got.body, "Seconds to wait before trying again: 1.") || !strings.Contains(got.body, `id="who"`) {
				t.Fatalf("eleventh request: %d %v %s", got.status, got.header, got.body)
			}
			// A form too.
			if got := do(boss, "POST", "/dashboard/signout", url.Values{}); got.status != http.StatusTooManyRequests {
				t.Fatalf("a form of the spent session: %d", got.status)
			}
			// Another session (same address) has its own bucket.
			if got := do(ketoan, "GET", "/dashboard/", nil); got.status != 200 {
				t.Fatalf("another session: %d", got.status)
			}

			// A search costs SearchCost (5): two spend the full bucket, a
			// third waits 5 s, though a plain page (1) may go a second later.
			clk.Advance(time.Minute)
			search := "/dashboard/transactions?memo=DH1234"
			for i := range 2 {
				if got := do(boss, "GET", search, nil); got.status != 200 {
					t.Fatalf("search %d: %d %s", i, got.status, got.body)
				}
			}
			if got := do(boss, "GET", search, nil); got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") != "5" {
				t.Fatalf("third search: %d %v", got.status, got.header)
			}
			clk.Advance(time.Second)
			if got := do(boss, "GET", "/dashboard/transactions", nil); got.status != 200 {
				t.Fatalf("the list, not a search, a second later: %d", got.status)
			}
			if got := do(boss, "GET", search, nil); got.status != http.StatusTooManyRequests {
				t.Fatalf("a search a second later: %d", got.status)
			}
			clk.Advance(5 * time.Second)
			if got := do(boss, "GET", search, nil); got.status != 200 {
				t.Fatalf("a search once 5 tokens are back: %d", got.status)
			}
		})
	})
}
