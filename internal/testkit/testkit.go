// Package testkit is what the tests of several packages share: a settable
// clock, a buffer safe for a server's concurrent log writes, and one HTTP
// request helper. Only tests import it (ARCHITECTURE.md, Tests); it imports
// the standard library only, so that every package's tests may use it.
package testkit

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Clock is a recon.Clock that moves only when told, safe for concurrent
// use. Its time is the one NewClock set, moved by Set and Advance; a
// WallClock's is the wall clock's, moved by Advance.
type Clock struct {
	mu     sync.Mutex
	t      time.Time
	wall   bool
	offset time.Duration
}

// NewClock is a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// WallClock is the wall clock moved by Advance, for code that also reads
// the wall clock itself (fosite stamps tokens with it) and must agree with
// the clock it is given.
func WallClock() *Clock { return &Clock{wall: true} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wall {
		return time.Now().Add(c.offset)
	}
	return c.t.Add(c.offset)
}

// Set puts the clock at t: from then on it stands there until moved.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t, c.wall, c.offset = t, false, 0
}

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// Buffer is a bytes.Buffer safe for concurrent writes, such as a server's
// log lines.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Do sends a request and returns the status and the raw body; it follows
// no redirect. auth, when set, adds the credentials (Bearer, or
// (*http.Request).SetBasicAuth) or other headers; contentType, when set,
// is the body's.
func Do(t testing.TB, method, url string, auth func(*http.Request), contentType, body string) (int, []byte) {
	t.Helper()
	status, _, raw := Send(t, method, url, auth, contentType, body)
	return status, raw
}

// Send is Do that also returns the answer's headers.
func Send(t testing.TB, method, url string, auth func(*http.Request), contentType, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != nil {
		auth(req)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return resp.StatusCode, resp.Header, raw
}

// Bearer sets the Authorization header to the bearer token, none when
// token is empty.
func Bearer(token string) func(*http.Request) {
	return func(r *http.Request) {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
	}
}

// Call sends a JSON body (Do) with the bearer token and returns the status
// and the decoded answer; an answer that is not a JSON object fails the
// test.
func Call(t testing.TB, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	status, _, v := CallWithHeader(t, method, url, token, body)
	return status, v
}

// CallWithHeader is Call that also returns the answer's headers.
func CallWithHeader(t testing.TB, method, url, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	status, header, raw := Send(t, method, url, Bearer(token), "application/json", body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %q", method, url, status, raw)
	}
	return status, header, v
}

// WaitFor polls cond until it holds, and fails the test when it still does
// not after timeout.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Typo returns code with its last two characters swapped, or its last digit
// changed when they are the same: one edit away, as a payer's slip would be.
func Typo(code string) string {
	n := len(code)
	if code[n-1] != code[n-2] {
		return code[:n-2] + code[n-1:] + code[n-2:n-1]
	}
	return code[:n-1] + string('0'+(code[n-1]-'0'+1)%10)
}
