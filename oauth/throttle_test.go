package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"recon"
	"recon/internal/testkit"
)

func TestThrottlePolicy(t *testing.T) {
	p := ThrottlePolicy{Free: 2, Delay: time.Second, MaxDelay: 5 * time.Second, LockAfter: 6, Lock: time.Hour}
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	th := newThrottle()
	// The wait after each failure, all at t0.
	for i, want := range []time.Duration{0, 0, time.Second, 2 * time.Second, 4 * time.Second, time.Hour, time.Hour} {
		th.fail("k", p, t0)
		if got := th.wait("k", p, t0); got != want {
			t.Errorf("after failure %d: wait %v, want %v", i+1, got, want)
		}
	}
	if got := th.wait("k", p, t0.Add(59*time.Minute)); got != time.Minute {
		t.Errorf("locked key 59 minutes later: wait %v", got)
	}
	if got := th.wait("k", p, t0.Add(time.Hour)); got != 0 {
		t.Errorf("after the lock: wait %v", got)
	}
	// Failures are forgotten a Lock after the last one: the next counts from one.
	th.fail("k", p, t0.Add(time.Hour))
	if got := th.wait("k", p, t0.Add(time.Hour)); got != 0 {
		t.Errorf("first failure after the window: wait %v", got)
	}
	// MaxDelay caps the doubling.
	q := ThrottlePolicy{Free: 0, Delay: time.Second, MaxDelay: 3 * time.Second, LockAfter: 100, Lock: time.Hour}
	for range 10 {
		th.fail("q", q, t0)
	}
	if got := th.wait("q", q, t0); got != 3*time.Second {
		t.Errorf("capped wait %v", got)
	}
	th.forget("q")
	if got := th.wait("q", q, t0); got != 0 {
		t.Errorf("forgotten key waits %v", got)
	}
	if got := th.wait("other", q, t0); got != 0 {
		t.Errorf("unknown key waits %v", got)
	}
}

// TestLoginThrottle is issue 8's finding: 25 wrong passwords in a row were
// all tried, then the right one worked. Now failures make the account wait
// from that address, growing, then lock it there; an unknown account is answered exactly alike; the
// client address is throttled across accounts; every attempt is logged
// without the password. The clock stands still unless the test moves it,
// so the machine's own pace cannot change the outcome.
func TestLoginThrottle(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		logs := new(testkit.Buffer)
		clock := testkit.NewClock(time.Now())
		s, err := New(Config{
			Issuer: b.srv.URL, Secret: []byte("0123456789abcdef0123456789abcdef"), Clock: clock,
			Logger:          slog.New(slog.NewTextHandler(logs, nil)),
			PairThrottle:    ThrottlePolicy{Free: 1, Delay: time.Hour, MaxDelay: 4 * time.Hour, LockAfter: 10, Lock: 24 * time.Hour},
			AccountThrottle: ThrottlePolicy{Free: 1000, Delay: time.Second, MaxDelay: time.Second, Lock: 24 * time.Hour},
			AddressThrottle: ThrottlePolicy{Free: 30, Delay: time.Hour, MaxDelay: 4 * time.Hour, LockAfter: 100, Lock: 24 * time.Hour},
		}, b.db)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		s.Register(mux)
		srv := httptest.NewServer(mux)
		defer srv.Close()
		tb := *b
		tb.srv, tb.server = srv, s

		attempt := func(email, password string) page {
			t.Helper()
			_, challenge := newPKCE()
			p := tb.authorizePage(t, authorizeParams(b.conf.ID, challenge, "company"))
			return tb.submit(t, p.hidden, email, password, "allow")
		}
		const wrongPassword = "Wr0ng-Pa55-9f3k"
		outcomes := func(email string) []string {
			var out []string
			for range 3 {
				p := attempt(email, wrongPassword)
				out = append(out, fmt.Sprintf("%d %s", p.status, p.header.Get("Retry-After")))
			}
			return out
		}
		// An existing account and an unknown one get the same answers: a
		// free failure, then a wait of an hour. (An unknown account costs a
		// bcrypt comparison at cost 12, slow under the race detector: few
		// attempts use one.)
		want := []string{"200 ", "200 ", "429 3600"}
		for _, email := range []string{testEmail, "nobody@example.com"} {
			if got := outcomes(email); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: %v, want %v", email, got, want)
			}
		}
		// While waiting, even the right password is refused, unchecked.
		p := attempt(testEmail, testPassword)
		if p.status != http.StatusTooManyRequests || p.location != nil || !strings.Contains(p.body, "Too many failed sign-in attempts. Try again in 3600 seconds.") {
			t.Fatalf("right password during the wait: %d %v %.300s", p.status, p.location, p.body)
		}
		// Wrong passwords up to the lock: then 24 hours.
		for i := 3; i <= 10; i++ {
			clock.Advance(4 * time.Hour)
			attempt(testEmail, wrongPassword)
		}
		if p := attempt(testEmail, testPassword); p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") != "86400" {
			t.Fatalf("locked account: %d Retry-After %q", p.status, p.header.Get("Retry-After"))
		}
		// After the lock the right password works, and clears the count.
		clock.Advance(24 * time.Hour)
		if p := attempt(testEmail, testPassword); p.status != http.StatusSeeOther || p.location.Query().Get("code") == "" {
			t.Fatalf("after the lock: %d %v", p.status, p.location)
		}
		if p := attempt(testEmail, wrongPassword); p.status != http.StatusOK {
			t.Fatalf("first failure after a login: %d", p.status)
		}

		// The address: failures spread over many accounts add up.
		clock.Advance(48 * time.Hour)
		for i := range 31 {
			u := b.createRoleUser(t, fmt.Sprintf("spray%d@example.com", i), "Member")
			if p := attempt(u.Email, wrongPassword); p.status != http.StatusOK {
				t.Fatalf("spray %d: %d", i, p.status)
			}
		}
		if p := attempt(testEmail, testPassword); p.status != http.StatusTooManyRequests {
			t.Fatalf("address over its budget: %d", p.status)
		}

		// Every attempt is logged, with its outcome, never the password.
		l := logs.String()
		for _, s := range []string{"outcome=failed", "outcome=throttled", "outcome=success", "email=nobody@example.com", "address=127.0.0.1"} {
			if !strings.Contains(l, s) {
				t.Errorf("the log lacks %q", s)
			}
		}
		if strings.Contains(l, wrongPassword) || strings.Contains(l, testPassword) {
			t.Error("the log holds a password")
		}
	})
}

// TestThrottleCountsAttemptsSentAtOnce: attempts are charged before the
// password is checked, so that many sent at once cannot all pass the
// throttle before the first failure is counted (a bcrypt check takes a
// while); a right password refunds its charge.
func TestThrottleCountsAttemptsSentAtOnce(t *testing.T) {
	p := ThrottlePolicy{Free: 2, Delay: time.Hour, MaxDelay: time.Hour, LockAfter: 5, Lock: 24 * time.Hour}
	free := ThrottlePolicy{Free: 1000, Delay: time.Hour, MaxDelay: time.Hour, LockAfter: 2000, Lock: 24 * time.Hour}
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	th := newThrottle()
	// Ten attempts arrive before any password check ends: three go ahead
	// (two free, then the one whose failure starts the wait), seven wait.
	var refunds []func()
	waited := 0
	for range 10 {
		wait, refund, _ := th.attempt(t0, throttleKey{"pair", "acct", p}, throttleKey{"address", "addr", free})
		if wait > 0 {
			waited++
			continue
		}
		refunds = append(refunds, refund)
	}
	if len(refunds) != 3 || waited != 7 {
		t.Fatalf("%d attempts went ahead, %d waited; want 3 and 7", len(refunds), waited)
	}
	// The first was the right password: its charge is refunded, the other
	// two failures stay, so the account still waits.
	refunds[0]()
	if w := th.wait("acct", p, t0); w != 0 {
		t.Errorf("after one refund of three charges (two free): wait %v, want 0", w)
	}
	if wait, _, _ := th.attempt(t0, throttleKey{"pair", "acct", p}, throttleKey{"address", "addr", free}); wait != 0 {
		t.Errorf("a fourth attempt after the refund waits %v", wait)
	}
	if w := th.wait("acct", p, t0); w != time.Hour {
		t.Errorf("after three failures: wait %v, want 1h", w)
	}
}

// TestLoginWithADeadDatabase: when the database stops answering between the
// page and the submit, the client is sent server_error (no code, no
// detail), and nothing is charged to the account's throttle.
func TestLoginWithADeadDatabase(t *testing.T) {
	b := setup(t, "sqlite")
	_, challenge := newPKCE()
	p := b.authorizePage(t, authorizeParams(b.conf.ID, challenge, "company"))
	if p.status != http.StatusOK {
		t.Fatalf("page: %d", p.status)
	}
	if err := b.db.Close(); err != nil {
		t.Fatal(err)
	}
	p = b.submit(t, p.hidden, testEmail, testPassword, "allow")
	// RFC 6749 §4.1.2.1: server_error, by redirect to the checked redirect URI.
	if p.location == nil || p.location.Query().Get("error") != "server_error" || p.location.Query().Get("code") != "" {
		t.Fatalf("submit with a dead database: %d %v, want a redirect with error=server_error", p.status, p.location)
	}
	if d := p.location.Query().Get("error_description"); strings.Contains(d, "sql") || strings.Contains(d, "closed") {
		t.Errorf("the redirect shows internal detail: %s", d)
	}
	if w := b.server.throttle.wait(fmt.Sprintf("account:%d:%s", b.company.ID, testEmail), b.server.cfg.AccountThrottle, time.Now()); w != 0 {
		t.Errorf("a failed check charged the throttle: wait %v", w)
	}
}

// TestLockoutCannotBeUsedAgainstAUser is issue 18's finding: ten wrong
// passwords from anywhere locked a user out for 15 minutes. Now, with the
// default policies, an attacker hammering an account from five addresses
// (50 failures, each as soon as it is allowed) locks only those addresses'
// pairs with the account; the user, from an address that has not failed,
// waits at most the account's soft delay (a few seconds) and signs in.
// Each lock is logged and counted. The throttle is in each node's memory;
// the user is read from the database of each engine.
func TestLockoutCannotBeUsedAgainstAUser(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *bundle) {
		logs := new(testkit.Buffer)
		clock := testkit.NewClock(time.Now())
		reg := prometheus.NewRegistry()
		s, err := New(Config{Issuer: b.srv.URL, Secret: []byte("0123456789abcdef0123456789abcdef"), Clock: clock,
			Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: NewMetrics(reg)}, b.db)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		c := &recon.Client{Company: b.company.ID, ID: "dashboard"}
		const wrongPassword = "Wr0ng-Pa55-9f3k"
		login := func(password, addr string) (time.Duration, error) {
			t.Helper()
			_, err := s.throttledLogin(ctx, c, testEmail, password, addr)
			var wait errThrottled
			if errors.As(err, &wait) {
				return time.Duration(wait), nil
			}
			return 0, err
		}
		attackers := []string{"203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4", "203.0.113.5"}
		for _, addr := range attackers {
			for failed := 0; failed < DefaultPairThrottle.LockAfter; {
				wait, err := login(wrongPassword, addr)
				if wait > 0 {
					clock.Advance(wait) // the attacker tries again as soon as it may
					continue
				}
				if recon.ErrorCode(err) != recon.EUNAUTHORIZED {
					t.Fatalf("attacker at %s: %v", addr, err)
				}
				failed++
			}
		}
		// Each attacking address is locked out of the account, even with
		// the right password.
		for _, addr := range attackers {
			if wait, _ := login(testPassword, addr); wait <= DefaultAccountThrottle.MaxDelay {
				t.Errorf("%s after its 10 failures: wait %v, want a lock", addr, wait)
			}
		}
		// The user, from an address that has not failed: at most the soft
		// delay, then in.
		const user = "198.51.100.7"
		wait, err := login(testPassword, user)
		if err != nil || wait > DefaultAccountThrottle.MaxDelay {
			t.Fatalf("the user from a fresh address: wait %v, %v; want at most %v", wait, err, DefaultAccountThrottle.MaxDelay)
		}
		clock.Advance(wait)
		if wait, err := login(testPassword, user); wait != 0 || err != nil {
			t.Fatalf("the user after the soft delay: wait %v, %v; want signed in", wait, err)
		}

		// Five locks, logged without the password and counted.
		l := logs.String()
		if n := strings.Count(l, `msg="oauth: login locked" key=pair`); n != len(attackers) {
			t.Errorf("%d pair locks logged, want %d:\n%s", n, len(attackers), l)
		}
		if strings.Contains(l, wrongPassword) || strings.Contains(l, testPassword) {
			t.Error("the log holds a password")
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]float64{}
		for _, f := range families {
			if f.GetName() == "recon_login_lockouts_total" {
				for _, m := range f.GetMetric() {
					counts[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		if counts["pair"] != float64(len(attackers)) || counts["address"] != 0 {
			t.Errorf("recon_login_lockouts_total %v, want pair %d and address 0", counts, len(attackers))
		}
	})
}
