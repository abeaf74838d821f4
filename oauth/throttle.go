package oauth

import (
	"sync"
	"time"
)

// ThrottlePolicy says how failed logins slow down further attempts on one
// key (an account, or a client address): the first Free failures cost
// nothing; each further one makes the key wait Delay, doubled per failure
// up to MaxDelay; at LockAfter failures the key is locked for Lock. A key's
// failures are forgotten after Lock without a failure, or when the account
// logs in.
type ThrottlePolicy struct {
	Free      int
	Delay     time.Duration
	MaxDelay  time.Duration
	LockAfter int
	Lock      time.Duration
}

// Default throttle policies (decisions.md §9). An address gets more room
// than an account, since many people may sit behind one NAT.
var (
	DefaultAccountThrottle = ThrottlePolicy{Free: 3, Delay: time.Second, MaxDelay: time.Minute, LockAfter: 10, Lock: 15 * time.Minute}
	DefaultAddressThrottle = ThrottlePolicy{Free: 20, Delay: time.Second, MaxDelay: time.Minute, LockAfter: 100, Lock: 15 * time.Minute}
)

// maxThrottleKeys bounds the throttle's memory: past it, keys whose
// failures are forgotten are swept, and if none is, the new key is not
// tracked (its address is still counted).
const maxThrottleKeys = 100_000

// throttle counts failed logins per key in memory, per process. Several
// nodes each keep their own counts, so an attacker spreading attempts over
// N nodes gets N times the room; the lock still bounds it.
type throttle struct {
	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	n     int
	last  time.Time // of the last failure
	until time.Time // no attempt before this
}

func newThrottle() *throttle { return &throttle{keys: make(map[string]*failures)} }

// attempt decides, in one step, whether a login attempt on the account
// from the address may go ahead at now: if either key must still wait, it
// reports how long and counts nothing; otherwise it counts the attempt as a
// failure of both keys at once, and refund takes that back (the password
// was right, or the check failed for another reason).
func (t *throttle) attempt(account string, ap ThrottlePolicy, address string, dp ThrottlePolicy, now time.Time) (wait time.Duration, refund func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if wait = max(t.waitLocked(account, ap, now), t.waitLocked(address, dp, now)); wait > 0 {
		return wait, nil
	}
	undoA, undoD := t.failLocked(account, ap, now), t.failLocked(address, dp, now)
	return 0, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		undoA()
		undoD()
	}
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
	t.failLocked(key, p, now)
}

// failLocked records a failure and returns what takes it back (with t.mu
// held): one failure less, and no wait while the rest are free ones. Other
// failures counted meanwhile stay counted.
func (t *throttle) failLocked(key string, p ThrottlePolicy, now time.Time) (undo func()) {
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
				return func() {}
			}
		}
		f = &failures{}
		t.keys[key] = f
	}
	f.n++
	f.last = now
	switch {
	case f.n >= p.LockAfter:
		f.until = now.Add(p.Lock)
	case f.n > p.Free:
		d := p.Delay << min(f.n-p.Free-1, 30)
		if d > p.MaxDelay || d <= 0 {
			d = p.MaxDelay
		}
		f.until = now.Add(d)
	}
	return undo
}

// forget clears the key's failures (a successful login of the account).
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
