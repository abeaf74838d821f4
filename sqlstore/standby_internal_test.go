package sqlstore

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestStandbyCheckStoppedGivesNoVerdict: a check in flight when the checker
// stops gives no verdict on the standby. Its queries fail because they were
// cancelled, which says nothing of the standby; before, the cancelled check
// recorded the standby unreachable, and a listing then never tried it.
func TestStandbyCheckStoppedGivesNoVerdict(t *testing.T) {
	// A server that accepts connections and never answers: a check that
	// reaches it waits (up to standbyCheckTimeout) until it is stopped.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	pool, _, err := openPostgres("postgres://recon@"+ln.Addr().String()+"/recon?sslmode=disable", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s := &standby{store: &DB{db: pool, d: postgresDialect{}}, every: 5 * time.Millisecond,
		done: make(chan struct{}), reason: "not checked yet"}
	runCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.run(runCtx, pool)
	c := <-accepted // a check is waiting for the server's answer
	defer c.Close()
	s.stop()
	<-s.done
	if st := s.status(); st.Reason != "not checked yet" {
		t.Fatalf("after a check stopped in flight: %+v, want the reason before it (not checked yet)", st)
	}
}
