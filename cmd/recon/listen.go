package main

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

	"github.com/spf13/cobra"

	"recon"
)

// listenFlags configure `recon listen`.
type listenFlags struct {
	server, merchantID, secret, forwardTo, events string
	timeout                                       time.Duration
}

func newListenCmd(a *app) *cobra.Command {
	var f listenFlags
	cmd := &cobra.Command{
		Use:   "listen",
		Short: "Receive the test-mode notifications of a company on this machine",
		Long: `Open one outbound, long-lived connection to a Recon server with the company's
test-mode merchant credentials (recon merchant credentials --company ID --test)
and receive every notification its test mode produces (IPNs, and hub events),
with the body and the headers a target would get, X-Recon-Signature included.
Each is POSTed to --forward-to, and the local answer (status, latency, an
excerpt of the body) is sent back to the server, which records it as an
attempt in the delivery log: a 2xx delivers the notification, anything else
leaves it pending. No public URL and no open port are needed here.

The connection is made again after a drop; notifications wait in the outbox
until answered, so none is lost meanwhile. Several listeners may attach: each
gets every notification (at most 5 connections per credential on each server
node). The signing secret to verify X-Recon-Signature with is printed when the
connection is made. The server checks the credentials and the company again
every few seconds and before it sends notifications: when they were rotated
or the company was made inactive it closes the stream, and recon listen
prints why and exits with an error. Stop with Ctrl-C.`,
		Example: `  recon listen --server http://localhost:8080 --merchant-id TEST-MC1_ab12 --merchant-secret test_... --forward-to http://localhost:3000/ipn
  recon listen --server https://recon.example.vn --merchant-id TEST-MC1_ab12 --merchant-secret test_... --forward-to http://localhost:3000/ipn --events ORDER_PAID`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fwd, err := url.Parse(f.forwardTo)
			if err != nil || (fwd.Scheme != "http" && fwd.Scheme != "https") || fwd.Host == "" {
				return fmt.Errorf("--forward-to must be an absolute http(s) URL, such as http://localhost:3000/ipn")
			}
			if _, err := url.Parse(f.server); err != nil || !strings.HasPrefix(f.server, "http") {
				return fmt.Errorf("--server must be the Recon server's base URL, such as http://localhost:8080")
			}
			return (&listener{flags: f, out: a.stdout, errOut: a.stderr, clock: a.clock}).run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", "http://localhost:8080", "base URL of the Recon server")
	fl.StringVar(&f.merchantID, "merchant-id", "", "the company's test-mode merchant id, TEST-... (required)")
	fl.StringVar(&f.secret, "merchant-secret", "", "its secret key, test_... (required)")
	fl.StringVar(&f.forwardTo, "forward-to", "", "local URL each notification is POSTed to (required)")
	fl.StringVar(&f.events, "events", "", "only these events, comma-separated (default: all)")
	fl.DurationVar(&f.timeout, "forward-timeout", 30*time.Second, "how long the local URL has to answer")
	for _, n := range []string{"merchant-id", "merchant-secret", "forward-to"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

// listener is one `recon listen` run.
type listener struct {
	flags       listenFlags
	out, errOut io.Writer
	// clock dates the lines printed for each notification (recon.SystemClock
	// when nil); after waits between connections (time.After when nil), so
	// that a test drives the backoff without sleeping.
	clock recon.Clock
	after func(time.Duration) <-chan time.Time
	id    string // from the server's ready event
}

// Reconnection backoff of recon listen: the first wait, doubled after each
// failed connection up to the last.
const (
	listenFirstWait = time.Second
	listenMaxWait   = 15 * time.Second
)

// run streams until ctx ends, connecting again after each drop.
func (l *listener) run(ctx context.Context) error {
	if l.clock == nil {
		l.clock = recon.SystemClock{}
	}
	if l.after == nil {
		l.after = time.After
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
		fmt.Fprintf(l.errOut, "connection lost (%v); connecting again in %s\n", err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-l.after(wait):
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
func (l *listener) stream(ctx context.Context) error {
	u := strings.TrimRight(l.flags.server, "/") + "/v1/listen"
	if l.flags.events != "" {
		u += "?events=" + url.QueryEscape(l.flags.events)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.SetBasicAuth(l.flags.merchantID, l.flags.secret)
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

func (l *listener) handle(ctx context.Context, event string, data []byte) error {
	switch event {
	case "ready":
		var r struct {
			ListenerID    string `json:"listener_id"`
			CompanyID     int64  `json:"company_id"`
			SigningSecret string `json:"signing_secret"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("bad ready event: %w", err)
		}
		l.id = r.ListenerID
		fmt.Fprintf(l.out, "Ready: listening to the test mode of company %d (listener %s), forwarding to %s\n", r.CompanyID, r.ListenerID, l.flags.forwardTo)
		fmt.Fprintf(l.out, "Signing secret: %s  (verify X-Recon-Signature with it)\n", r.SigningSecret)
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
func (l *listener) forward(ctx context.Context, d *streamed) {
	ans := map[string]any{"delivery_id": d.DeliveryID, "listener_id": l.id, "forward_to": l.flags.forwardTo}
	fctx, cancel := context.WithTimeout(ctx, l.flags.timeout)
	defer cancel()
	start := time.Now()
	status, excerpt, err := post(fctx, l.flags.forwardTo, d.Headers, d.Body)
	latency := time.Since(start)
	ans["status_code"], ans["latency_ms"], ans["response"] = status, latency.Milliseconds(), excerpt
	outcome := fmt.Sprintf("[%d]", status)
	if err != nil {
		ans["error"] = err.Error()
		outcome = "error: " + err.Error()
	}
	fmt.Fprintf(l.out, "%s  %-18s delivery %-6d → %s %s (%d ms)\n", l.clock.Now().Format("2006-01-02 15:04:05"), d.Event, d.DeliveryID,
		l.flags.forwardTo, outcome, latency.Milliseconds())
	body, _ := json.Marshal(ans)
	status, excerpt, err = post(ctx, strings.TrimRight(l.flags.server, "/")+"/v1/listen/answers",
		map[string]string{"Content-Type": "application/json"}, string(body), l.flags.merchantID, l.flags.secret)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d: %s", status, excerpt)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(l.errOut, "could not record the answer to delivery %d (%v): it stays pending and comes again\n", d.DeliveryID, err)
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
