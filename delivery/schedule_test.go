package delivery_test

import (
	"testing"
	"time"

	"recon/delivery"
)

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	def := delivery.DefaultSchedule()
	fast := delivery.Schedule{Waits: []time.Duration{time.Second, 2 * time.Second}, MaxAge: 10 * time.Second}
	for _, tc := range []struct {
		name     string
		s        delivery.Schedule
		attempts int
		now      time.Time
		want     time.Time // zero: dead
	}{
		{"first failure", def, 1, t0, t0.Add(time.Minute)},
		{"second failure", def, 2, t0.Add(time.Minute), t0.Add(2 * time.Minute)},
		{"third failure", def, 3, t0.Add(2 * time.Minute), t0.Add(4 * time.Minute)},
		{"seventh failure waits 13 minutes", def, 7, t0.Add(20 * time.Minute), t0.Add(33 * time.Minute)},
		{"eighth failure widens to 30 minutes", def, 8, t0.Add(33 * time.Minute), t0.Add(63 * time.Minute)},
		{"then daily", def, 14, t0.Add(10 * time.Hour), t0.Add(34 * time.Hour)},
		{"daily repeats", def, 40, t0.Add(30 * time.Hour), t0.Add(54 * time.Hour)},
		{"last wait ends at the 3 days", def, 15, t0.Add(56 * time.Hour), t0.Add(72 * time.Hour)},
		{"dead at the 3 days", def, 16, t0.Add(72 * time.Hour), time.Time{}},
		{"dead after the 3 days", def, 3, t0.Add(80 * time.Hour), time.Time{}},
		{"zero schedule is the default", delivery.Schedule{}, 1, t0, t0.Add(time.Minute)},
		{"attempts below 1 count as 1", def, 0, t0, t0.Add(time.Minute)},
		{"custom waits", fast, 1, t0, t0.Add(time.Second)},
		{"custom waits repeat their last", fast, 5, t0.Add(3 * time.Second), t0.Add(5 * time.Second)},
		{"custom max age", fast, 5, t0.Add(9 * time.Second), t0.Add(10 * time.Second)},
		{"custom dead", fast, 6, t0.Add(10 * time.Second), time.Time{}},
		{"waits without a max age retry for 3 days", delivery.Schedule{Waits: []time.Duration{time.Hour}}, 9, t0.Add(71 * time.Hour), t0.Add(72 * time.Hour)},
	} {
		got, dead := tc.s.Next(tc.attempts, t0, tc.now)
		if dead != tc.want.IsZero() || !got.Equal(tc.want) {
			t.Errorf("%s: Next(%d, t0, t0+%s) = %v, dead %v; want %v", tc.name, tc.attempts, tc.now.Sub(t0), got.Sub(t0), dead, tc.want.Sub(t0))
		}
	}
}

// TestDefaultScheduleTimeline follows a delivery that always fails, each
// attempt made when due: 8 attempts in the first 33 minutes (docs/design.md, D7),
// the last at exactly 3 days, 16 in all.
func TestDefaultScheduleTimeline(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	s := delivery.DefaultSchedule()
	var at []time.Duration
	now := t0
	for attempts := 1; ; attempts++ {
		at = append(at, now.Sub(t0))
		next, dead := s.Next(attempts, t0, now)
		if dead {
			break
		}
		if !next.After(now) {
			t.Fatalf("attempt %d at %s: next %s is not later", attempts, now.Sub(t0), next.Sub(t0))
		}
		now = next
	}
	m := time.Minute
	want := []time.Duration{0, 1 * m, 2 * m, 4 * m, 7 * m, 12 * m, 20 * m, 33 * m, 63 * m, 123 * m, 243 * m, 483 * m, 963 * m,
		1923 * m, 3363 * m, 72 * time.Hour}
	if len(at) != len(want) {
		t.Fatalf("attempts at %v, want %v", at, want)
	}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("attempt %d at %s, want %s (all: %v)", i+1, at[i], want[i], at)
		}
	}
}
