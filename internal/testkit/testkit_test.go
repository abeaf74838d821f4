package testkit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
)

var _ recon.Clock = (*testkit.Clock)(nil)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	c := testkit.NewClock(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now = %v, want %v", got, t0)
	}
	c.Advance(time.Minute)
	if got := c.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after Advance: %v", got)
	}
	c.Set(t0.Add(time.Hour))
	if got := c.Now(); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after Set: %v", got)
	}
	w := testkit.WallClock()
	w.Advance(time.Hour)
	if d := time.Until(w.Now()); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("the wall clock advanced by an hour is %v ahead", d)
	}
	// Concurrent use (go test -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { c.Advance(time.Second); _ = c.Now() })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(t0.Add(time.Hour + 4*time.Second)) {
		t.Fatalf("after concurrent Advance: %v", got)
	}
}

func TestBuffer(t *testing.T) {
	var b testkit.Buffer
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { fmt.Fprintf(&b, "%d", i) })
	}
	wg.Wait()
	if len(b.String()) != 4 {
		t.Fatalf("%q", b.String())
	}
}

func TestDoAndCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/json", http.StatusFound)
		case "/json":
			fmt.Fprintf(w, `{"auth":%q,"type":%q}`, r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
		default:
			w.WriteHeader(http.StatusTeapot)
			fmt.Fprint(w, "plain")
		}
	}))
	defer srv.Close()
	if status, raw := testkit.Do(t, "GET", srv.URL+"/moved", nil, "", ""); status != http.StatusFound {
		t.Fatalf("a redirect is followed: %d %s", status, raw)
	}
	if status, raw := testkit.Do(t, "POST", srv.URL+"/x", func(r *http.Request) { r.SetBasicAuth("a", "b") }, "", "body"); status != http.StatusTeapot || string(raw) != "plain" {
		t.Fatalf("Do: %d %q", status, raw)
	}
	status, v := testkit.Call(t, "POST", srv.URL+"/json", "tok", "{}")
	if status != 200 || v["auth"] != "Bearer tok" || v["type"] != "application/json" {
		t.Fatalf("Call: %d %v", status, v)
	}
	if _, v := testkit.Call(t, "GET", srv.URL+"/json", "", ""); v["auth"] != "" {
		t.Fatalf("Call without a token sent %v", v["auth"])
	}
}

func TestTypo(t *testing.T) {
	for code, want := range map[string]string{"DH123456": "DH123465", "DH123455": "DH123456", "DH123499": "DH123490"} {
		if got := testkit.Typo(code); got != want {
			t.Errorf("Typo(%s) = %s, want %s", code, got, want)
		}
	}
}

func TestReceiver(t *testing.T) {
	rc := testkit.NewReceiver(t)
	send := func(id, body string) int {
		status, _ := testkit.Do(t, "POST", rc.URL+"/ipn", func(r *http.Request) { r.Header.Set("X-Recon-Delivery", id) }, "application/json", body)
		return status
	}
	if s := send("1", `{"notification_type":"ORDER_PAID"}`); s != 200 {
		t.Fatalf("first: %d", s)
	}
	rc.Answer(func(n int) int { return 503 })
	if s := send("1", `{"notification_type":"ORDER_PAID"}`); s != 503 {
		t.Fatalf("second: %d", s)
	}
	rc.Answer(nil)
	send("2", `{"notification_type":"TRANSACTION_VOID"}`)
	if rc.Seen("1") != 1 || rc.Seen("2") != 1 || len(rc.Got()) != 3 || len(rc.IPNs("ORDER_PAID")) != 2 || len(rc.IPNs("TRANSACTION_VOID")) != 1 {
		t.Fatalf("seen %d %d, got %d, IPNs %v", rc.Seen("1"), rc.Seen("2"), len(rc.Got()), rc.IPNs("ORDER_PAID"))
	}
}

// TestMarkHalf checks the notes `make test` summarises: a file per half and
// state in the folder testkit.EnvHalves names, none without it.
func TestMarkHalf(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(testkit.EnvHalves, "")
	testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfRan) // unset: nothing, anywhere
	t.Setenv(testkit.EnvHalves, dir)
	testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfRan)
	testkit.MarkHalf(testkit.HalfPostgres, testkit.HalfRan)
	testkit.MarkHalf(testkit.HalfBrowser, testkit.HalfSkipped)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "browser-skipped postgres-ran" {
		t.Fatalf("marks: %q", got)
	}
}
