package testkit

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// Receiver is a merchant's notification endpoint on a loopback port: it
// records every request and answers 200, or what Answer says.
type Receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []Received
	seen   map[string]int // X-Recon-Delivery → times answered 2xx
	status func(n int) int
}

// Received is one request the Receiver got.
type Received struct {
	Header http.Header
	Body   []byte
}

// NewReceiver starts a Receiver, closed when the test ends.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{seen: map[string]int{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, Received{r.Header.Clone(), body})
		status := http.StatusOK
		if rc.status != nil {
			status = rc.status(len(rc.got))
		}
		if status/100 == 2 {
			rc.seen[r.Header.Get("X-Recon-Delivery")]++
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Answer sets the status of the n-th request (1-based) from now on; nil
// answers 200.
func (rc *Receiver) Answer(status func(n int) int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

// Got returns the requests received so far.
func (rc *Receiver) Got() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// Seen returns how many times the delivery (its X-Recon-Delivery) was
// answered with a 2xx.
func (rc *Receiver) Seen(delivery string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.seen[delivery]
}

// IPNs returns the bodies of the IPNs received of the notification type.
func (rc *Receiver) IPNs(typ string) []map[string]any {
	var out []map[string]any
	for _, g := range rc.Got() {
		var m map[string]any
		if json.Unmarshal(g.Body, &m) == nil && m["notification_type"] == typ {
			out = append(out, m)
		}
	}
	return out
}

// Deliveries returns how many times each delivery (its X-Recon-Delivery)
// was answered with a 2xx.
func (rc *Receiver) Deliveries() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.seen)
}
