package delivery

import (
	"slices"
	"time"
)

// Schedule is the retry policy of failed deliveries. After the n-th failed
// attempt the next one waits Waits[n-1]; past the end of Waits its last
// element repeats. No attempt is made later than MaxAge after the first: the
// last wait is shortened to end at that deadline, and a delivery that fails
// then is dead.
//
// The zero Schedule is DefaultSchedule; a Schedule with Waits but no MaxAge
// gives up after DefaultMaxAge. Tests shrink both to milliseconds.
type Schedule struct {
	Waits  []time.Duration
	MaxAge time.Duration
}

// DefaultMaxAge is how long a delivery is retried: 3 days (docs/design.md, D7).
const DefaultMaxAge = 72 * time.Hour

// defaultWaits are the schedule of docs/design.md, D7: 1, 1, 2, 3, 5, 8, 13 minutes
// (with the first attempt, 8 attempts in 33 minutes), then more widely
// spaced, then daily until the 3 days run out: 16 attempts in all.
var defaultWaits = []time.Duration{
	1 * time.Minute, 1 * time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 8 * time.Minute, 13 * time.Minute,
	30 * time.Minute, 1 * time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 16 * time.Hour, 24 * time.Hour,
}

// DefaultSchedule returns the production retry policy.
func DefaultSchedule() Schedule {
	return Schedule{Waits: slices.Clone(defaultWaits), MaxAge: DefaultMaxAge}
}

// Next returns when to make the next attempt of a delivery after attempts
// failed ones (the one that just failed included), the first made at
// firstAt, the last ending at now; or dead when there is to be none.
func (s Schedule) Next(attempts int, firstAt, now time.Time) (next time.Time, dead bool) {
	waits, maxAge := s.Waits, s.MaxAge
	if len(waits) == 0 {
		waits = defaultWaits
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	deadline := firstAt.Add(maxAge)
	if !now.Before(deadline) {
		return time.Time{}, true
	}
	attempts = max(attempts, 1)
	next = now.Add(waits[min(attempts, len(waits))-1])
	if next.After(deadline) {
		next = deadline
	}
	return next, false
}
