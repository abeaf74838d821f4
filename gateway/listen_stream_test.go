package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/gateway"
	"recon/sqlstore/dbtest"
)

// stream is an open GET /v1/listen, read event by event.
type stream struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// openStream opens GET /v1/listen with the credentials; the stream is
// closed at cleanup. A refusal is returned with its body read.
func (b *bundle) openStream(t *testing.T, id, secret string) (*stream, response) {
	t.Helper()
	// The deadline only bounds a broken test; no assertion depends on time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.srv.URL+"/v1/listen", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", basic(id, secret))
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		var body strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
		return nil, response{resp.StatusCode, resp.Header, []byte(body.String())}
	}
	s := &stream{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(s.close)
	return s, response{status: resp.StatusCode, header: resp.Header}
}

func (s *stream) close() { s.cancel(); s.resp.Body.Close() }

// next returns the stream's next event and its data (pings skipped).
func (s *stream) next(t *testing.T) (string, map[string]any) {
	t.Helper()
	var event, data string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended without an event: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && event != "":
			var v map[string]any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				t.Fatalf("event %s: data %q: %v", event, data, err)
			}
			return event, v
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// TestListenStreamIsReauthorised is issue 18's finding: an open listen
// stream kept receiving notifications (payloads, the signing secret, the
// X-Secret-Key) after its credentials were rotated or its company made
// inactive. Now the credential and the company are checked again before a
// look's notifications are written and at every tick, and the stream ends
// with a `bye` naming why; a credential holds at most MaxListenStreams
// streams on a node (429 beyond). The ticks are the test's own channel, so
// the order of events is the test's, not the clock's.
func TestListenStreamIsReauthorised(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		ticks := make(chan time.Time)
		listeners := gateway.NewListeners()
		b := setup(t, engine, func(h *gateway.Handler) {
			h.Listeners = listeners
			h.Headers = func(*recon.Target, *recon.Delivery, time.Time) http.Header {
				return http.Header{"Content-Type": {"application/json"}}
			}
			h.ListenTick = func() (<-chan time.Time, func()) { return ticks, func() {} }
			h.MaxListenStreams = 2
		})
		ctx := context.Background()
		tenant, err := b.db.TestTenant(ctx, b.a.company.ID())
		if err != nil {
			t.Fatal(err)
		}
		setCreds := func(id, secret string) {
			t.Helper()
			if err := b.db.SetMerchant(ctx, &recon.Merchant{Tenant: tenant.ID, MerchantID: id, SecretKey: secret}); err != nil {
				t.Fatal(err)
			}
		}
		enqueue := func() int64 {
			t.Helper()
			d := &recon.Delivery{CompanyID: tenant.ID.ID(), Kind: recon.DeliveryIPN, Event: recon.IPNOrderPaid, Payload: []byte(`{"n":1}`)}
			if err := b.db.EnqueueDelivery(ctx, d); err != nil {
				t.Fatal(err)
			}
			listeners.Notify()
			return d.ID
		}
		const id1, secret1 = "TEST-A1-one", "test_" + "1111111111111111111111111111"
		const id2, secret2 = "TEST-A1-two", "test_" + "2222222222222222222222222222"
		setCreds(id1, secret1)

		// Rotated credentials: the next notification is not written; the
		// stream says why and that reconnecting will not help.
		s, _ := b.openStream(t, id1, secret1)
		if ev, _ := s.next(t); ev != "ready" {
			t.Fatalf("first event %s, want ready", ev)
		}
		setCreds(id2, secret2)
		first := enqueue()
		ev, data := s.next(t)
		if ev != "bye" || data["code"] != "unauthorized" || data["retry"] != false ||
			!strings.Contains(data["reason"].(string), "credentials of this stream were changed or removed") {
			t.Fatalf("after the rotation: %s %v, want bye unauthorized", ev, data)
		}
		if _, err := s.r.ReadString('\n'); err == nil {
			t.Fatal("the stream goes on after its bye")
		}

		// The new credentials get the notification; then the company is
		// made inactive and, at the next tick, with nothing to send, the
		// stream ends.
		s, _ = b.openStream(t, id2, secret2)
		if ev, _ := s.next(t); ev != "ready" {
			t.Fatalf("first event %s, want ready", ev)
		}
		if ev, data := s.next(t); ev != "delivery" || data["delivery_id"] != float64(first) {
			t.Fatalf("new credentials: %s %v, want delivery %d", ev, data, first)
		}
		if _, err := b.db.UpdateCompany(ctx, b.a.company.ID(), func(c *recon.Company) error {
			c.Status = recon.CompanyInactive
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ticks <- time.Time{}
		ev, data = s.next(t)
		if ev != "bye" || data["code"] != "forbidden" || data["retry"] != false || !strings.Contains(data["reason"].(string), "is inactive") {
			t.Fatalf("after the company became inactive: %s %v, want bye forbidden", ev, data)
		}
		if _, err := b.db.UpdateCompany(ctx, b.a.company.ID(), func(c *recon.Company) error {
			c.Status = recon.CompanyActive
			return nil
		}); err != nil {
			t.Fatal(err)
		}

		// At most MaxListenStreams streams per credential on this node: the
		// next one is 429 in the gateway's envelope, with Retry-After.
		var open []*stream
		for range 2 {
			s, _ := b.openStream(t, id2, secret2)
			if ev, _ := s.next(t); ev != "ready" {
				t.Fatalf("stream %d: first event %s", len(open)+1, ev)
			}
			open = append(open, s)
		}
		_, r := b.openStream(t, id2, secret2)
		checkJSON(t, "a third stream", r, http.StatusTooManyRequests, wantError("rate_limited",
			"merchant "+id2+" has 2 recon listen streams open on this server already: close one, or retry after 15 s"))
		if r.header.Get("Retry-After") != "15" {
			t.Errorf("Retry-After %q, want 15", r.header.Get("Retry-After"))
		}
		// A passing tick changes nothing: the open streams still get
		// what is made.
		ticks <- time.Time{}
		second := enqueue()
		for i, s := range open {
			for {
				ev, data := s.next(t)
				if ev != "delivery" {
					t.Fatalf("stream %d: %s %v, want deliveries", i+1, ev, data)
				}
				if data["delivery_id"] == float64(second) {
					break
				}
			}
		}

		// A check that cannot be made (the database is gone) ends the
		// stream too, telling the client to reconnect.
		if err := b.db.Close(); err != nil {
			t.Fatal(err)
		}
		// One tick each: a stream that ends takes no more.
		ticks <- time.Time{}
		ticks <- time.Time{}
		for i, s := range open {
			ev, data := s.next(t)
			if ev != "bye" || data["code"] != "internal_error" || data["retry"] != true {
				t.Fatalf("stream %d with the database gone: %s %v, want bye internal_error, retry true", i+1, ev, data)
			}
		}
	})
}
