package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"code.dny.dev/ssrf"

	"recon"
)

// Limits of one attempt.
const (
	// DefaultTimeout bounds an attempt from dialling to the end of the
	// answer's body: a 2xx within it is success (docs/design.md, D7).
	DefaultTimeout = 30 * time.Second
	// maxRead is how much of an answer's body is read; the rest is dropped.
	maxRead = 64 << 10
	// excerptSize is how much of it is kept with the attempt.
	excerptSize = 1 << 10
)

// ClientOptions configures NewClient.
type ClientOptions struct {
	// AllowPrivate lets requests reach internal addresses (tests, private
	// networks: recon serve --allow-private-targets). Off by default.
	AllowPrivate bool
	// Timeout bounds each attempt (default DefaultTimeout).
	Timeout time.Duration
}

// Client sends deliveries. It is the only outbound HTTP client of
// deliveries, and it refuses internal targets when it connects: its dialer
// checks the address actually dialled (after DNS resolution, so a name that
// resolves to a public address at save time and to an internal one later —
// DNS rebinding — fails), no proxy is used, and redirects are not followed (a
// 3xx answer is a failed attempt). It is safe for concurrent use.
type Client struct {
	http    *http.Client
	timeout time.Duration
}

// NewClient returns a client with the options.
func NewClient(o ClientOptions) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: min(o.Timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		dialer.Control = guardian.Safe
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          512,
		// One dispatcher's workers may all be sending to one merchant.
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Client{
		timeout: o.Timeout,
		http: &http.Client{
			Transport: transport,
			Timeout:   o.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

// Result is the outcome of one attempt.
type Result struct {
	// StatusCode is the answer's HTTP status, 0 when none arrived.
	StatusCode int
	// Latency is the time from sending to the end of the answer.
	Latency time.Duration
	// Response is the start of the answer's body (at most 1 KiB, valid UTF-8).
	Response string
	// Err is why no complete answer arrived (nil when one did).
	Err error
}

// OK reports whether the attempt succeeded: a 2xx answer within the timeout.
func (r Result) OK() bool { return r.Err == nil && r.StatusCode >= 200 && r.StatusCode < 300 }

// Error describes a failed attempt in a few words, for the attempt log that
// merchants read; "" for a success.
func (r Result) Error(timeout time.Duration) string {
	switch {
	case r.OK():
		return ""
	case r.Err == nil && r.StatusCode >= 300 && r.StatusCode < 400:
		return fmt.Sprintf("HTTP %d: redirects are not followed", r.StatusCode)
	case r.Err == nil:
		return fmt.Sprintf("HTTP %d", r.StatusCode)
	}
	var dnsErr *net.DNSError
	var netErr net.Error
	switch err := r.Err; {
	case errors.Is(err, ssrf.ErrProhibitedIP), errors.Is(err, ssrf.ErrProhibitedNetwork):
		return "refused to connect to an internal address"
	case errors.As(err, &dnsErr):
		return "DNS lookup of " + dnsErr.Name + " failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("no complete answer within %s", timeout)
	default:
		// *url.Error repeats the method and URL; the cause is enough.
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return excerpt([]byte(err.Error()))
	}
}

// Timeout is the time limit of one attempt.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Send makes one attempt to deliver d to t at now: a POST of d.Payload with
// Content-Type application/json, User-Agent Recon-Webhook/1.0,
// X-Recon-Delivery (d.ID), X-Recon-Event (d.Event), X-Recon-Timestamp (now
// in Unix seconds) and X-Recon-Signature (Sign with t.SigningSecret, the
// target's own, whatever its auth type), and X-Secret-Key: t.Secret when
// t.AuthType is SECRET_KEY. A target without a signing secret is not sent
// to (ErrNoSigningSecret): a signature under an empty key proves nothing.
func (c *Client) Send(ctx context.Context, t *recon.Target, d *recon.Delivery, now time.Time) Result {
	if t.SigningSecret == "" {
		return Result{Err: ErrNoSigningSecret}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(d.Payload))
	if err != nil {
		return Result{Err: err}
	}
	req.Header = Headers(t, d, now)
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return Result{Latency: time.Since(start), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRead))
	res := Result{StatusCode: resp.StatusCode, Latency: time.Since(start), Response: excerpt(body)}
	if err != nil {
		// The status arrived but the body did not finish in time: not an answer.
		res.Err = err
	}
	return res
}

// Headers returns the headers of an attempt to send d to t at now: content
// type, user agent, delivery id and event, and the timestamp and signature
// under t's signing secret, with X-Secret-Key for a SECRET_KEY target. `recon
// listen` forwards the same.
func Headers(t *recon.Target, d *recon.Delivery, now time.Time) http.Header {
	h := http.Header{}
	for _, f := range recon.DeliveryHeaders(t, d, now) {
		h.Set(f.Name, f.Value)
	}
	return h
}

// excerpt returns the start of b, at most excerptSize bytes cut at a
// character boundary, as valid UTF-8 without NUL bytes.
func excerpt(b []byte) string {
	if len(b) > excerptSize {
		n := excerptSize
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}
