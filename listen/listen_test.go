package listen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"recon/internal/testkit"
)

// TestListenClientIsDriven: the listener's backoff and the time it prints
// come from what it is given, so this runs without a database, a server of
// Recon's or a second of sleep. A server that fails every connection sees
// waits of 1, 2, 4, 8, then 15 s; a notification is forwarded, answered, and
// printed dated by the clock.
func TestListenClientIsDriven(t *testing.T) {
	var mu sync.Mutex
	var answers []string
	forward := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "ok")
	}))
	defer forward.Close()
	connections := 0
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/listen/answers":
			b, _ := io.ReadAll(r.Body)
			answers = append(answers, string(b))
			_, _ = io.WriteString(w, "{}")
		case "/v1/listen":
			connections++
			if connections > 1 {
				http.Error(w, `{"message":"down"}`, http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: ready\ndata: {\"listener_id\":\"l_1\",\"company_id\":7,\"signing_secret\":\"s\"}\n\n"+
				"event: delivery\ndata: {\"delivery_id\":31,\"kind\":\"ipn\",\"event\":\"ORDER_PAID\",\"headers\":{\"X-Test\":\"1\"},\"body\":\"{}\"}\n\n")
		}
	}))
	defer server.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var waits []time.Duration
	var out, errOut strings.Builder
	l := &Listener{
		Config: Config{Server: server.URL, MerchantID: "TEST-MC7_ab", Secret: "test_x", ForwardTo: forward.URL, Timeout: 5 * time.Second},
		Out:    &out, ErrOut: &errOut,
		Clock:    testkit.NewClock(time.Date(2026, 11, 26, 10, 11, 12, 0, time.UTC)),
		Location: time.FixedZone("ICT", 7*3600), // the business zone, not UTC
		After: func(d time.Duration) <-chan time.Time {
			waits = append(waits, d)
			if len(waits) == 6 {
				cancel()
			}
			c := make(chan time.Time, 1)
			c <- time.Time{}
			return c
		},
	}
	if err := l.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	if !strings.Contains(out.String(), "2026-11-26 17:11:12  ORDER_PAID         delivery 31     → "+forward.URL+" [202]") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "connecting again in 1s") || !strings.Contains(errOut.String(), "connecting again in 15s") {
		t.Errorf("errors:\n%s", errOut.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(answers) != 1 || !strings.Contains(answers[0], `"delivery_id":31`) || !strings.Contains(answers[0], `"status_code":202`) {
		t.Errorf("answers %v", answers)
	}
}
