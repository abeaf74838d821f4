package oauth

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics counts what the login throttle does. Build it with NewMetrics on
// the server's registry.
type Metrics struct {
	lockouts *prometheus.CounterVec
}

// NewMetrics registers the login metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{lockouts: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "recon_login_lockouts_total",
		Help: "Login keys locked after too many failed passwords, by key: pair (an account from one address) or address.",
	}, []string{"key"})}
	for _, k := range []string{"pair", "address"} {
		m.lockouts.WithLabelValues(k)
	}
	reg.MustRegister(m.lockouts)
	return m
}

func (m *Metrics) locked(kind string) {
	if m != nil {
		m.lockouts.WithLabelValues(kind).Inc()
	}
}

// ThrottlePolicy says how failed logins slow down further attempts on one
// key: the first Free failures cost nothing; each further one makes the key
// wait Delay, doubled per failure up to MaxDelay; at LockAfter failures the
// key is locked for Lock (LockAfter 0: never locked, a soft throttle). A
// key's failures are forgotten Lock after the last one, or when a login
// clears them.
type ThrottlePolicy struct {
	Free      int
	Delay     time.Duration
	MaxDelay  time.Duration
	LockAfter int
	Lock      time.Duration
}

// Default throttle policies (docs/api.md, Login throttling). Only the
// address and the pair of an account and an address are ever locked, so
// that failures from elsewhere never lock a user out: the account across
// addresses is a soft throttle, a wait of at most a few seconds (OWASP's
// authentication guidance). An address gets more room than a pair, since
// many people may sit behind one NAT.
var (
	DefaultPairThrottle    = ThrottlePolicy{Free: 3, Delay: time.Second, MaxDelay: time.Minute, LockAfter: 10, Lock: 15 * time.Minute}
	DefaultAccountThrottle = ThrottlePolicy{Free: 10, Delay: time.Second, MaxDelay: 4 * time.Second, Lock: 15 * time.Minute}
	DefaultAddressThrottle = ThrottlePolicy{Free: 20, Delay: time.Second, MaxDelay: time.Minute, LockAfter: 100, Lock: 15 * time.Minute}
)

// maxThrottleKeys bounds the throttle's memory: past it, keys whose
// failures are forgotten are swept, and if none is, the new key is not
// tracked (its other keys are still counted).
const maxThrottleKeys = 100_000

// throttle counts failed logins per key in memory, per process. Several
// nodes each keep their own counts, so an attacker spreading attempts over
// N nodes gets N times the room; the locks still bound it.
type throttle struct {
	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	n     int
	last  time.Time // of the last failure
	until time.Time // no attempt before this
}

// throttleKey is one key an attempt is charged to, its policy and its kind
// (pair, account, address: what a lock is logged and counted as).
type throttleKey struct {
	kind, key string
	policy    ThrottlePolicy
}

func newThrottle() *throttle { return &throttle{keys: make(map[string]*failures)} }

// attempt decides, in one step, whether a login attempt charged to the keys
// may go ahead at now: if any key must still wait, it reports the longest
// wait and counts nothing; otherwise it counts the attempt as a failure of
// every key at once, and refund takes that back (the password was right, or
// the check failed for another reason). locks names the kinds of the keys
// this failure locks, once it stands (not refunded).
func (t *throttle) attempt(now time.Time, keys ...throttleKey) (wait time.Duration, refund func(), locks []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		wait = max(wait, t.waitLocked(k.key, k.policy, now))
	}
	if wait > 0 {
		return wait, nil, nil
	}
	undo := make([]func(), len(keys))
	for i, k := range keys {
		var locked bool
		if undo[i], locked = t.failLocked(k.key, k.policy, now); locked {
			locks = append(locks, k.kind)
		}
	}
	return 0, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, u := range undo {
			u()
		}
	}, locks
}

// wait reports how long the key must still wait at now (0: it may try).
func (t *throttle) wait(key string, p ThrottlePolicy, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waitLocked(key, p, now)
}

func (t *throttle) waitLocked(key string, p ThrottlePolicy, now time.Time) time.Duration {
	f := t.keys[key]
	if f == nil || now.Sub(f.last) >= p.Lock {
		return 0
	}
	return max(0, f.until.Sub(now))
}

// fail records a failed attempt on the key at now.
func (t *throttle) fail(key string, p ThrottlePolicy, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.failLocked(key, p, now)
}

// failLocked records a failure and returns what takes it back (with t.mu
// held): one failure less, and no wait while the rest are free ones. Other
// failures counted meanwhile stay counted. locked reports that this failure
// locks the key.
func (t *throttle) failLocked(key string, p ThrottlePolicy, now time.Time) (undo func(), locked bool) {
	undo = func() {
		f := t.keys[key]
		if f == nil {
			return
		}
		if f.n--; f.n <= 0 {
			delete(t.keys, key)
		} else if f.n <= p.Free {
			f.until = time.Time{}
		}
	}
	f := t.keys[key]
	if f == nil || now.Sub(f.last) >= p.Lock {
		if f == nil && len(t.keys) >= maxThrottleKeys {
			t.sweep(now, p.Lock)
			if len(t.keys) >= maxThrottleKeys {
				return func() {}, false
			}
		}
		f = &failures{}
		t.keys[key] = f
	}
	f.n++
	f.last = now
	switch {
	case p.LockAfter > 0 && f.n >= p.LockAfter:
		f.until = now.Add(p.Lock)
		locked = f.n == p.LockAfter
	case f.n > p.Free:
		d := p.Delay << min(f.n-p.Free-1, 30)
		if d > p.MaxDelay || d <= 0 {
			d = p.MaxDelay
		}
		f.until = now.Add(d)
	}
	return undo, locked
}

// forget clears the key's failures (a successful login from the pair's address).
func (t *throttle) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys, key)
}

func (t *throttle) sweep(now time.Time, window time.Duration) {
	for k, f := range t.keys {
		if now.Sub(f.last) >= window {
			delete(t.keys, k)
		}
	}
}
