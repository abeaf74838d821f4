package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"recon/internal/testkit"
)

// TestLoopRunsEveryStepInOrder: Once runs the steps in order, each at the
// clock's time; a failing step is a warning with what it reports and does
// not stop the next; a change is logged with Done, no change not at all.
func TestLoopRunsEveryStepInOrder(t *testing.T) {
	clock := testkit.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	var ran []string
	step := func(name string, changed []any, err error) Step {
		return Step{Doing: "doing " + name, Done: "did " + name, Run: func(_ context.Context, now time.Time) ([]any, error) {
			ran = append(ran, name+"@"+now.Format("15:04"))
			clock.Advance(time.Minute)
			return changed, err
		}}
	}
	var logs testkit.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}))
	Loop{Every: time.Hour, Steps: []Step{
		step("a", nil, nil),
		step("b", []any{"rows", 3}, errors.New("disk full")),
		step("c", []any{"count", 2}, nil),
	}}.Once(context.Background(), clock, log)
	if got := strings.Join(ran, " "); got != "a@09:00 b@09:01 c@09:02" {
		t.Errorf("steps ran %q", got)
	}
	want := `level=WARN msg="doing b" err="disk full" rows=3
level=INFO msg="did c" count=2
`
	if logs.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", logs.String(), want)
	}
}
