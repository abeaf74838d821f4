package web

import (
	"net/http"
	"testing"
	"time"

	"recon/internal/testkit"
)

func TestRateLimiter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	l := NewRateLimiter(2, 3) // 2 a second, bursts of 3
	l.now = func() time.Time { return now }
	allow := func(key string) (bool, http.Header) {
		h := http.Header{}
		return l.Allow(h, key), h
	}
	want := func(h http.Header, limit, remaining, reset, retry string) {
		t.Helper()
		got := [4]string{h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), h.Get("Retry-After")}
		if got != [4]string{limit, remaining, reset, retry} {
			t.Errorf("limit, remaining, reset, retry-after = %q, want %q", got, [4]string{limit, remaining, reset, retry})
		}
	}

	// The burst: three at once, then refused until a token comes back.
	for i, remaining := range []string{"2", "1", "0"} {
		ok, h := allow("a")
		if !ok {
			t.Fatalf("request %d refused", i)
		}
		want(h, "3", remaining, []string{"1", "1", "2"}[i], "")
	}
	ok, h := allow("a")
	if ok {
		t.Fatal("fourth request of the burst allowed")
	}
	want(h, "3", "0", "2", "1")

	// Another key has its own bucket.
	if ok, _ := allow("b"); !ok {
		t.Fatal("key b refused because of key a")
	}

	// Half a second later one token is back (2 a second).
	now = now.Add(500 * time.Millisecond)
	if ok, h := allow("a"); !ok {
		t.Fatal("refused after the refill")
	} else {
		want(h, "3", "0", "2", "")
	}
	if ok, _ := allow("a"); ok {
		t.Fatal("allowed beyond the refill")
	}

	// A minute later both buckets are full, and the sweep forgets them.
	now = now.Add(time.Minute)
	allow("c")
	if _, kept := l.buckets["a"]; kept || len(l.buckets) != 1 {
		t.Errorf("after the sweep: %d buckets (a kept: %v), want only c", len(l.buckets), kept)
	}

	// Off.
	var off *RateLimiter
	if NewRateLimiter(0, 10) != nil || !off.Allow(http.Header{}, "a") {
		t.Error("a zero rate must turn limiting off")
	}
}

// TestRateLimiterCost: a request costing n takes n tokens, waits for n, and
// costs at most the burst (else it could never pass); WithClock sets the time.
func TestRateLimiterCost(t *testing.T) {
	clk := testkit.NewClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
	l := NewRateLimiter(1, 10).WithClock(clk)
	h := http.Header{}
	first := l.AllowN(h, "a", 5)
	second := l.AllowN(h, "a", 5)
	if !first || !second {
		t.Fatal("two requests of 5 within a burst of 10 refused")
	}
	h = http.Header{}
	if l.AllowN(h, "a", 5) || h.Get("Retry-After") != "5" {
		t.Fatalf("a third: allowed, or Retry-After %q; want refused, 5", h.Get("Retry-After"))
	}
	clk.Advance(4 * time.Second)
	if !l.Allow(http.Header{}, "a") || l.AllowN(http.Header{}, "a", 5) {
		t.Fatal("after 4 s: one request must pass, then 5 more must not")
	}
	clk.Advance(time.Minute)
	if !l.AllowN(http.Header{}, "a", 50) || l.Allow(http.Header{}, "a") {
		t.Fatal("a cost over the burst must take the whole burst")
	}
}
