// Package listen is the client side of `recon listen` (docs/api.md, Test
// mode and recon listen): one long-lived connection to a server's
// GET /v1/listen with a company's test-mode merchant credentials, made again
// with backoff after a drop; each notification streamed is POSTed to a local
// URL and the local answer reported back (POST /v1/listen/answers). The
// server side is the gateway's (gateway/listen.go).
package listen

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"recon"
)

// Config is where a Listener connects and what it forwards: the flags of
// `recon listen`.
type Config struct {
	// Server is the Recon server's base URL; MerchantID and Secret the
	// company's test-mode merchant credentials.
	Server, MerchantID, Secret string
	// ForwardTo is the local URL each notification is POSTed to, Timeout
	// how long it has to answer.
	ForwardTo string
	Timeout   time.Duration
	// Events, comma-separated, are the only events wanted (all when empty).
	Events string
}

// Listener is one `recon listen` run.
type Listener struct {
	Config
	// Out receives a line per notification, ErrOut what went wrong.
	Out, ErrOut io.Writer
	// Clock dates the lines printed for each notification (recon.SystemClock
	// when nil); After waits between connections (time.After when nil), so
	// that a test drives the backoff without sleeping.
	Clock recon.Clock
	// Location is the business time zone the lines' times are written in
	// (`--timezone`, as every time the CLI and the dashboard show; the
	// machine's zone when nil).
	Location *time.Location
	After    func(time.Duration) <-chan time.Time
	id       string // from the server's ready event
}

// Reconnection backoff of recon listen: the first wait, doubled after each
// failed connection up to the last.
const (
	listenFirstWait = time.Second
	listenMaxWait   = 15 * time.Second
)

// Run streams until ctx ends, connecting again after each drop. It returns
// nil when ctx ends, and an error when the server refuses the credentials or
// closes the stream for good (they were rotated, the company made inactive).
func (l *Listener) Run(ctx context.Context) error {
	if l.Clock == nil {
		l.Clock = recon.SystemClock{}
	}
	if l.After == nil {
		l.After = time.After
	}
	wait := listenFirstWait
	for {
		err := l.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused *refusal
		if errors.As(err, &refused) {
			return refused // bad credentials or a live credential: retrying will not help
		}
		var closed *closedStream
		if errors.As(err, &closed) {
			return closed // the credential was rotated or the company made inactive
		}
		fmt.Fprintf(l.ErrOut, "connection lost (%v); connecting again in %s\n", err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-l.After(wait):
		}
		wait = min(2*wait, listenMaxWait)
	}
}

// refusal is the server's 4xx answer to the stream request.
type refusal struct {
	status int
	msg    string
}

func (r *refusal) Error() string {
	return fmt.Sprintf("the server refused the listener (%d): %s", r.status, r.msg)
}

// closedStream is the server's final `bye` on a stream that reconnecting
// will not bring back: the credential was rotated or removed, or the
// company made inactive (docs/api.md, Test mode and recon listen).
type closedStream struct{ code, reason string }

func (c *closedStream) Error() string {
	return fmt.Sprintf("the server closed the stream (%s): %s", c.code, c.reason)
}

// stream runs one connection: it reads server-sent events until the stream
// ends, forwarding each notification.
func (l *Listener) stream(ctx context.Context) error {
	u := strings.TrimRight(l.Server, "/") + "/v1/listen"
	if l.Events != "" {
		u += "?events=" + url.QueryEscape(l.Events)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(l.MerchantID, l.Secret)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			return &refusal{resp.StatusCode, e.Message}
		}
		return fmt.Errorf("status %d: %s", resp.StatusCode, e.Message)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var event string
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event != "" {
				if err := l.handle(ctx, event, data.Bytes()); err != nil {
					return err
				}
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// streamed is a delivery event of the stream (gateway.listenEvent).
type streamed struct {
	DeliveryID int64             `json:"delivery_id"`
	Kind       string            `json:"kind"`
	Event      string            `json:"event"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

func (l *Listener) handle(ctx context.Context, event string, data []byte) error {
	switch event {
	case "ready":
		var r struct {
			ListenerID    string `json:"listener_id"`
			CompanyID     int64  `json:"company_id"`
			SigningSecret string `json:"signing_secret"`
			Whsec         string `json:"signing_secret_whsec"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("bad ready event: %w", err)
		}
		l.id = r.ListenerID
		fmt.Fprintf(l.Out, "Ready: listening to the test mode of company %d (listener %s), forwarding to %s\n", r.CompanyID, r.ListenerID, l.ForwardTo)
		fmt.Fprintf(l.Out, "Signing secret: %s  (verify X-Recon-Signature with it)\n", r.SigningSecret)
		if r.Whsec != "" {
			fmt.Fprintf(l.Out, "Signing secret, whsec form: %s  (verify webhook-signature with a Standard Webhooks library)\n", r.Whsec)
		}
	case "delivery":
		var d streamed
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("bad delivery event: %w", err)
		}
		l.forward(ctx, &d)
	case "bye":
		var b struct {
			Code   string `json:"code"`
			Reason string `json:"reason"`
			Retry  *bool  `json:"retry"`
		}
		_ = json.Unmarshal(data, &b)
		if b.Retry != nil && !*b.Retry {
			return &closedStream{code: b.Code, reason: b.Reason}
		}
		return fmt.Errorf("the server ended the stream: %s", cmp.Or(b.Reason, "the server is stopping"))
	}
	return nil
}

// forward POSTs one notification to the local URL and reports the answer.
func (l *Listener) forward(ctx context.Context, d *streamed) {
	ans := map[string]any{"delivery_id": d.DeliveryID, "listener_id": l.id, "forward_to": l.ForwardTo}
	fctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	start := time.Now()
	status, excerpt, err := post(fctx, l.ForwardTo, d.Headers, d.Body)
	latency := time.Since(start)
	ans["status_code"], ans["latency_ms"], ans["response"] = status, latency.Milliseconds(), excerpt
	outcome := fmt.Sprintf("[%d]", status)
	if err != nil {
		ans["error"] = err.Error()
		outcome = "error: " + err.Error()
	}
	fmt.Fprintf(l.Out, "%s  %-18s delivery %-6d → %s %s (%d ms)\n", l.Clock.Now().In(cmp.Or(l.Location, time.Local)).Format(recon.DateTimeLayout), d.Event, d.DeliveryID,
		l.ForwardTo, outcome, latency.Milliseconds())
	body, _ := json.Marshal(ans)
	status, excerpt, err = post(ctx, strings.TrimRight(l.Server, "/")+"/v1/listen/answers",
		map[string]string{"Content-Type": "application/json"}, string(body), l.MerchantID, l.Secret)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d: %s", status, excerpt)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(l.ErrOut, "could not record the answer to delivery %d (%v): it stays pending and comes again\n", d.DeliveryID, err)
	}
}

// noRedirects is the client of post: a redirect is an answer, not followed.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// post sends body with the headers (and Basic credentials when given) and
// returns the status and an excerpt of the answer (1 KiB of valid UTF-8,
// without control characters).
func post(ctx context.Context, u string, headers map[string]string, body string, basic ...string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if len(basic) == 2 {
		req.SetBasicAuth(basic[0], basic[1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	clean := strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' && r != '\n' && r != '\r' {
			return -1 // the server refuses control characters
		}
		return r
	}, string(b))
	return resp.StatusCode, clean, err
}
