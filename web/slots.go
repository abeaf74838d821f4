package web

import (
	"strconv"
	"sync"

	"recon"
)

// DefaultSlots is how many statement imports a server process runs at once
// unless configured otherwise.
const DefaultSlots = 2

// SlotsRetryAfter is the Retry-After, in seconds, of work refused because
// the slots are taken.
const SlotsRetryAfter = 10

// Slots bounds heavy work of one kind (statement imports) in a server
// process: at most N at once, whichever way in asked (the API's upload, the
// dashboard's), and at most PerCompany of them for one company, so that one
// tenant cannot take every slot while another waits (docs/statements.md,
// Limits). Like RateLimiter it is per node: each node behind a load
// balancer has its own slots. cmd/recon makes one and gives it to every
// surface (a surface given none makes its own).
type Slots struct {
	n, perCompany int

	mu        sync.Mutex
	used      int
	byCompany map[int64]int
}

// NewSlots returns n slots (DefaultSlots when n is not positive), of which
// one company may hold perCompany (when not positive: half of them, at
// least one).
func NewSlots(n, perCompany int) *Slots {
	if n <= 0 {
		n = DefaultSlots
	}
	if perCompany <= 0 {
		perCompany = max(1, n/2)
	}
	return &Slots{n: n, perCompany: min(perCompany, n), byCompany: map[int64]int{}}
}

// Size reports the number of slots and one company's share.
func (s *Slots) Size() (n, perCompany int) { return s.n, s.perCompany }

// Acquire takes a slot for the company (its live id: its test data shares
// its share), or returns an EUNAVAILABLE error saying why none is free;
// release gives the slot back (once, whatever the number of calls).
func (s *Slots) Acquire(company int64) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	retry := strconv.Itoa(SlotsRetryAfter)
	switch {
	case s.used >= s.n:
		return nil, recon.Errorf(recon.EUNAVAILABLE, "too many statement uploads are being imported at once on this server: retry in %s seconds", retry)
	case s.byCompany[company] >= s.perCompany:
		return nil, recon.Errorf(recon.EUNAVAILABLE, "too many statement uploads of this company are being imported at once (at most %d): retry in %s seconds when one has finished", s.perCompany, retry)
	}
	s.used++
	s.byCompany[company]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.used--
			if s.byCompany[company]--; s.byCompany[company] <= 0 {
				delete(s.byCompany, company)
			}
		})
	}, nil
}
