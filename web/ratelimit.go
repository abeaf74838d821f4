package web

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"recon"
)

// RateLimiter is a token bucket per key (docs/design.md, D9: per OAuth2 client,
// and per merchant on the gateway): a key may make Burst requests at once,
// then Rate a second. Buckets live in this process's memory, so with several
// nodes behind a load balancer each node allows its own Rate: the limit
// shields a node from one runaway client, it is not a quota to bill by.
//
// A nil *RateLimiter allows everything (rate limiting off).
type RateLimiter struct {
	rate  rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	buckets   map[string]*rate.Limiter
	lastSweep time.Time
}

// NewRateLimiter returns a limiter of perSecond requests a second with bursts
// of burst, or nil (no limit) when perSecond is not positive.
func NewRateLimiter(perSecond float64, burst int) *RateLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &RateLimiter{rate: rate.Limit(perSecond), burst: max(1, burst), now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// WithClock makes the limiter read the time from c (a test's clock; the
// default is time.Now) and returns it.
func (l *RateLimiter) WithClock(c recon.Clock) *RateLimiter {
	if l != nil && c != nil {
		l.now = c.Now
	}
	return l
}

// sweepEvery is how often idle buckets are dropped: a full bucket is the
// same as none, so memory follows the clients active in the last minute.
const sweepEvery = time.Minute

// Allow takes a request from key's bucket and reports whether it may go on.
// It sets the X-RateLimit-Limit (the burst), X-RateLimit-Remaining (requests
// left now) and X-RateLimit-Reset (seconds until the bucket is full again)
// headers on h, and Retry-After (seconds until the next request is allowed)
// when it refuses.
func (l *RateLimiter) Allow(h http.Header, key string) bool { return l.AllowN(h, key, 1) }

// AllowN is Allow for a request that costs n requests (an expensive search;
// at most the burst).
func (l *RateLimiter) AllowN(h http.Header, key string, n int) bool {
	if l == nil {
		return true
	}
	n = min(max(n, 1), l.burst)
	now := l.now()
	l.mu.Lock()
	if now.Sub(l.lastSweep) >= sweepEvery {
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.burst) {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[key]
	if b == nil {
		b = rate.NewLimiter(l.rate, l.burst)
		l.buckets[key] = b
	}
	ok := b.AllowN(now, n)
	tokens := b.TokensAt(now)
	l.mu.Unlock()

	seconds := func(tokens float64) string {
		return strconv.FormatInt(int64(math.Ceil(tokens/float64(l.rate))), 10)
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(l.burst))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(max(0, int64(math.Floor(tokens))), 10))
	h.Set("X-RateLimit-Reset", seconds(float64(l.burst)-tokens))
	if !ok {
		h.Set("Retry-After", seconds(max(float64(n)-tokens, 1e-9)))
	}
	return ok
}
