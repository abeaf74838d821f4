package gateway

import (
	"testing"
	"time"
)

// TestListenCursor: the floor under which a stream stops looking moves up
// only to ids seen listenHorizon ago, so a notification that commits after
// one with a higher id is still found; ids under the floor are forgotten.
func TestListenCursor(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	c := listenCursor{sent: map[int64]bool{3: true, 7: true, 12: true}}
	c.seen(t0, 7)
	if c.floor != 0 {
		t.Fatalf("floor %d right after a look; want 0", c.floor)
	}
	c.seen(t0.Add(listenHorizon/2), 12)
	if c.floor != 0 {
		t.Fatalf("floor %d before the horizon; want 0", c.floor)
	}
	c.seen(t0.Add(listenHorizon), 12)
	if c.floor != 7 || c.sent[3] || c.sent[7] || !c.sent[12] {
		t.Fatalf("after the horizon: floor %d, sent %v; want floor 7 and only 12 remembered", c.floor, c.sent)
	}
	c.seen(t0.Add(3*listenHorizon), 12)
	if c.floor != 12 || len(c.sent) != 0 || len(c.marks) != 1 {
		t.Fatalf("later: floor %d, sent %v, marks %v; want floor 12, nothing remembered, one mark", c.floor, c.sent, c.marks)
	}
}
