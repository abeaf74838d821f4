package main

import (
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// BenchmarkDashboard measures the server time of the dashboard's home and
// transactions screens on the 1,000,000 transactions of
// BenchmarkListTransactions (one company, ~5,760 a day from 2026-01-01),
// a third of them paying an order (addMatched), with the clock on 2026-06-20, inside the data: the home sums 31 days
// (~180,000 transactions). One client, requests in sequence, through a real
// HTTP server on loopback with a signed-in session. Every page runs on the
// operations data too (loadOpsData, added before the first page: 100,000
// orders, 40,000 exceptions, 333,333 notifications with attempts).
func BenchmarkDashboard(b *testing.B) {
	pages := []struct{ name, path string }{
		{"home", "/dashboard/"},
		{"transactions", "/dashboard/transactions"},
		{"transactions-page500", "/dashboard/transactions?page=500"},
		{"transactions-dates", "/dashboard/transactions?from_date=2026-02-01&to_date=2026-02-07"},
		{"transactions-amount", "/dashboard/transactions?amount_in=150000"},
		// The search (code, matched state, memo): a window of at most 5,000
		// rows a request. A code or memo found nowhere near the top, and
		// the open exceptions (there are none), read the whole window.
		{"search-code", "/dashboard/transactions?code=DH500000"},
		{"search-code-day", "/dashboard/transactions?code=DH100000&from_date=2026-01-18&to_date=2026-01-18"},
		{"search-matched", "/dashboard/transactions?matched=matched"},
		{"search-unmatched-dates", "/dashboard/transactions?matched=unmatched&from_date=2026-02-01&to_date=2026-02-07"},
		{"search-exception", "/dashboard/transactions?matched=exception"},
		{"search-memo-common", "/dashboard/transactions?memo=nguy%E1%BB%85n+v%C4%83n"},
		{"search-memo-rare", "/dashboard/transactions?memo=tien+DH000123"},
		{"search-memo-matched", "/dashboard/transactions?memo=DH0&matched=matched"},
		{"exceptions", "/dashboard/exceptions"},
		{"exceptions-resolved", "/dashboard/exceptions?status=resolved&from_date=2026-02-01"},
		{"notifications", "/dashboard/notifications"},
		{"bank-accounts", "/dashboard/bank-accounts"},
		{"settings", "/dashboard/settings"},
	}
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			listEnvOnce[engine].Do(func() { listEnvs[engine] = loadListing(b, engine) })
			env := listEnvs[engine]
			if env == nil {
				b.Fatal("listing data failed to load")
			}
			opsDataOnce[engine].Do(func() { opsData[engine] = loadOpsData(b, env) })
			if opsData[engine] == nil {
				b.Fatal("operations data failed to load")
			}
			ctx := context.Background()
			addMatched(b, env)
			now := time.Date(2026, 6, 20, 15, 0, 0, 0, time.UTC)
			mux := web.NewMux()
			(&dashboard.Handler{Store: env.db, Sandbox: true, Clock: testkit.NewClock(now), Logger: slog.New(slog.DiscardHandler)}).Register(mux)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			u, err := env.db.UserByEmail(ctx, env.companyID, "bench@b.vn")
			if err != nil {
				b.Fatal(err)
			}
			token := "bench-session-token-0123456789abcdefghijklmnop"
			h := sha256.Sum256([]byte(token))
			if err := env.db.CreateDashboardSession(ctx, &recon.DashboardSession{UserID: u.ID, Company: env.companyID, Live: true,
				CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(time.Hour)}, h[:]); err != nil {
				b.Fatal(err)
			}
			for _, p := range append(slices.Clone(pages), opsPages(opsData[engine])...) {
				b.Run(p.name, func(b *testing.B) {
					var lat []time.Duration
					for b.Loop() {
						req, _ := http.NewRequest("GET", srv.URL+p.path, nil)
						req.AddCookie(&http.Cookie{Name: "recon_session", Value: token})
						t0 := time.Now()
						resp, err := http.DefaultClient.Do(req)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						lat = append(lat, time.Since(t0))
						if resp.StatusCode != 200 {
							b.Fatalf("GET %s: %d", p.path, resp.StatusCode)
						}
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
					b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99_ms")
				})
			}
		})
	}
}

// addMatched gives the listing's data set, which has no orders, a paying
// decision on every third transaction (once per process), so that the
// search by matched state meets both states. The day counts' matched_n is
// left at 0: the count's cost does not depend on its value.
func addMatched(b *testing.B, env *benchEnv) {
	var done bool
	if err := env.db.SQL().QueryRow(`SELECT EXISTS (SELECT 1 FROM match_decisions WHERE reason = 'bench')`).Scan(&done); err != nil {
		b.Fatal(err)
	}
	if done {
		return
	}
	if _, err := env.db.SQL().Exec(`INSERT INTO match_decisions (company_id, transaction_id, outcome, amount, reason, created_at)
		SELECT company_id, id, 'matched', amount_in, 'bench', created_at FROM transactions WHERE id % 3 = 0`); err != nil {
		b.Fatal(err)
	}
	if err := env.db.Optimize(context.Background()); err != nil {
		b.Fatal(err)
	}
}
