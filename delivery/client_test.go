package delivery_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"code.dny.dev/ssrf"

	"recon"
	"recon/delivery"
)

var testDelivery = &recon.Delivery{ID: 42, CompanyID: 7, Kind: recon.DeliveryIPN, Event: "ORDER_PAID",
	Payload: []byte(`{"notification_type":"ORDER_PAID","order":{"order_invoice_number":"INV-1"}}`)}

func TestClientSendsSignedRequest(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Write([]byte(`{"received":true}`))
	})
	c := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true})
	now := time.Unix(1772352000, 0)
	for _, tc := range []struct {
		name, authType, secret string
		wantSecretKey          bool
	}{
		{"secret key", recon.AuthSecretKey, "s3cret", true},
		{"none", recon.AuthNone, "", false},
	} {
		d := *testDelivery
		d.ID = int64(len(tc.name)) // a distinct id per case
		signing := recon.NewSecret()
		res := c.Send(t.Context(), &recon.Target{URL: rc.URL + "/ipn", AuthType: tc.authType, Secret: tc.secret, SigningSecret: signing, Active: true}, &d, now)
		if !res.OK() || res.StatusCode != 200 || res.Response != `{"received":true}` || res.Latency <= 0 || res.Error(c.Timeout()) != "" {
			t.Fatalf("%s: Send = %+v", tc.name, res)
		}
		calls := rc.calls(d.ID)
		if len(calls) != 1 {
			t.Fatalf("%s: receiver got %d requests", tc.name, len(calls))
		}
		h := calls[0].header
		if string(calls[0].body) != string(d.Payload) {
			t.Errorf("%s: body %q", tc.name, calls[0].body)
		}
		for k, want := range map[string]string{
			"Content-Type":           "application/json",
			"User-Agent":             "Recon-Webhook/1.0",
			delivery.HeaderDelivery:  strconv.FormatInt(d.ID, 10),
			delivery.HeaderEvent:     "ORDER_PAID",
			delivery.HeaderTimestamp: "1772352000",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("%s: header %s = %q, want %q", tc.name, k, got, want)
			}
		}
		_, has := h[http.CanonicalHeaderKey(delivery.HeaderSecretKey)]
		if has != tc.wantSecretKey || (has && h.Get(delivery.HeaderSecretKey) != tc.secret) {
			t.Errorf("%s: X-Secret-Key = %q (present %v), want present %v", tc.name, h.Get(delivery.HeaderSecretKey), has, tc.wantSecretKey)
		}
		ts, sig := h.Get(delivery.HeaderTimestamp), h.Get(delivery.HeaderSignature)
		if err := delivery.Verify(signing, ts, sig, calls[0].body, now, 5*time.Minute); err != nil {
			t.Errorf("%s: signature %q does not verify under the signing secret: %v", tc.name, sig, err)
		}
		// Neither the X-Secret-Key secret (sent in clear beside it) nor an
		// empty key, which anybody has, makes the signature.
		for _, other := range []string{tc.secret, "", "wrong"} {
			if delivery.Sign(other, now.Unix(), calls[0].body) == sig {
				t.Errorf("%s: the signature is an HMAC under %q", tc.name, other)
			}
		}
	}
	// A target without a signing secret gets nothing.
	d := *testDelivery
	d.ID = 999
	res := c.Send(t.Context(), &recon.Target{URL: rc.URL + "/ipn", AuthType: recon.AuthNone, Active: true}, &d, now)
	if !errors.Is(res.Err, delivery.ErrNoSigningSecret) || len(rc.calls(d.ID)) != 0 {
		t.Fatalf("Send without a signing secret = %+v, %d requests", res, len(rc.calls(d.ID)))
	}
}

func TestClientFailures(t *testing.T) {
	t.Parallel()
	c := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true})
	target := func(url string) *recon.Target {
		return &recon.Target{URL: url, AuthType: recon.AuthNone, SigningSecret: "k"}
	}

	t.Run("Non2xx", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("down \x00for\xff maintenance " + strings.Repeat("é", 2000)))
		})
		res := c.Send(t.Context(), target(rc.URL), testDelivery, time.Now())
		if res.OK() || res.StatusCode != 503 || res.Err != nil || res.Error(c.Timeout()) != "HTTP 503" {
			t.Fatalf("Send = %+v", res)
		}
		if len(res.Response) > 1024 || !strings.HasPrefix(res.Response, "down for\uFFFD maintenance éé") || strings.HasSuffix(res.Response, "\uFFFD") {
			t.Fatalf("excerpt of %d bytes: %q", len(res.Response), res.Response[:40])
		}
	})

	t.Run("RedirectNotFollowed", func(t *testing.T) {
		t.Parallel()
		elsewhere := newReceiver(t, nil)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			http.Redirect(w, r, elsewhere.URL+"/stolen", http.StatusTemporaryRedirect)
		})
		res := c.Send(t.Context(), target(rc.URL), testDelivery, time.Now())
		if res.OK() || res.StatusCode != 307 || res.Error(c.Timeout()) != "HTTP 307: redirects are not followed" {
			t.Fatalf("Send = %+v", res)
		}
		if rc.total.Load() != 1 || elsewhere.total.Load() != 0 {
			t.Fatalf("receiver got %d requests, redirect target %d; want 1 and 0", rc.total.Load(), elsewhere.total.Load())
		}
	})

	t.Run("SlowReceiverTimesOut", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		short := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true, Timeout: 50 * time.Millisecond})
		res := short.Send(t.Context(), target(rc.URL), testDelivery, time.Now())
		if res.OK() || res.StatusCode != 0 || res.Err == nil || res.Error(short.Timeout()) != "no complete answer within 50ms" {
			t.Fatalf("Send = %+v (%s)", res, res.Error(short.Timeout()))
		}
	})

	t.Run("SlowBodyTimesOut", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ int) {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		short := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true, Timeout: 50 * time.Millisecond})
		res := short.Send(t.Context(), target(rc.URL), testDelivery, time.Now())
		if res.OK() || res.StatusCode != 200 || res.Err == nil {
			t.Fatalf("a 200 whose body never ends: Send = %+v, want a failure", res)
		}
	})

	t.Run("ConnectionRefused", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		url := rc.URL
		rc.Close()
		res := c.Send(t.Context(), target(url), testDelivery, time.Now())
		if res.OK() || res.Err == nil || !strings.Contains(res.Error(c.Timeout()), "connection refused") {
			t.Fatalf("Send = %+v (%s)", res, res.Error(c.Timeout()))
		}
	})
}

// TestClientRefusesInternalAddresses: without AllowPrivate, the dialer
// refuses loopback addresses however the URL names them, before any byte
// is sent, so the receiver is never called.
func TestClientRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	port := rc.Listener.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":")+1:]
	c := delivery.NewClient(delivery.ClientOptions{})
	for _, tc := range []struct {
		url string
		// refused by the dialer's check; otherwise failing some other way
		// (127.1 is no address to Go's resolver, so its lookup fails)
		refused bool
	}{
		{rc.URL, true}, // http://127.0.0.1:port
		{"http://localhost:" + port, true},
		{"http://[::ffff:127.0.0.1]:" + port, true},
		{"http://127.1:" + port, false},
	} {
		res := c.Send(t.Context(), &recon.Target{URL: tc.url, AuthType: recon.AuthNone, SigningSecret: "k"}, testDelivery, time.Now())
		if res.OK() || tc.refused && (!errors.Is(res.Err, ssrf.ErrProhibitedIP) || res.Error(c.Timeout()) != "refused to connect to an internal address") {
			t.Errorf("Send to %s = %+v (%s), want the address refused", tc.url, res, res.Error(c.Timeout()))
		}
	}
	if n := rc.total.Load(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
	// The same receiver with AllowPrivate: reached.
	res := delivery.NewClient(delivery.ClientOptions{AllowPrivate: true}).Send(context.Background(),
		&recon.Target{URL: "http://localhost:" + port, AuthType: recon.AuthNone, SigningSecret: "k"}, testDelivery, time.Now())
	if !res.OK() || rc.total.Load() != 1 {
		t.Fatalf("AllowPrivate: Send = %+v, receiver got %d", res, rc.total.Load())
	}
}
