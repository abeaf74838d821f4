package apiv2

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// idem is an area of POST routes counting their runs, for the idempotency
// tests: pay (key optional), refund (key required), block (waits for
// release after signalling entered), fail (answers the error its body
// names), keep (keeps its key as long as its resource).
type idem struct {
	runs    atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func newIdem() *idem { return &idem{entered: make(chan struct{}, 16), release: make(chan struct{})} }

func (d *idem) routes(r *routes) {
	run := func(r *http.Request, _ *recon.Caller) (*Answer, error) {
		var in struct {
			Amount int64  `json:"amount"`
			Note   string `json:"note"`
			Fail   string `json:"fail"`
		}
		if err := decode(r, &in); err != nil {
			return nil, err
		}
		n := d.runs.Add(1)
		switch in.Fail {
		case "internal":
			return nil, fmt.Errorf("the bank is down")
		case "rule":
			return nil, recon.RuleError("amount_exceeds_refundable", "run %d: the amount exceeds the refundable", n)
		case "not-found":
			return nil, recon.Errorf(recon.ENOTFOUND, "run %d: no such order", n)
		}
		return created(map[string]any{"run": n, "amount": in.Amount}), nil
	}
	r.add("POST /v2/test/pay", run, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("POST /v2/test/other", run, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("POST /v2/test/refund", run, recon.ScopeRefundWrite, recon.ActionRequestRefunds, KeyRequired)
	r.add("POST /v2/test/block", func(r *http.Request, c *recon.Caller) (*Answer, error) {
		d.entered <- struct{}{}
		<-d.release
		return run(r, c)
	}, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("POST /v2/test/keep", func(r *http.Request, c *recon.Caller) (*Answer, error) {
		a, err := run(r, c)
		if a != nil {
			a.KeepKey = true
		}
		return a, err
	}, recon.ScopeRefundWrite, recon.ActionRequestRefunds, KeyRequired)
}

const key = "X-Idempotency-Key"

// TestIdempotencyReplays checks docs/api-v2.md, Idempotency on both
// engines: the same key and body (canonical JSON: another order of fields
// or spacing is the same body) replays the first answer, status and body,
// with Idempotent-Replayed: true and without running the handler; another
// body or route is 409 idempotency_key_reused; keys are per tenant (the
// test mode's are its own); a malformed key is 400 naming the header; a
// route that requires a key is 422 idempotency_key_required without one;
// 422 and 409 answers are replayed, while a 400, a 404 and a 500 leave the
// key free for the retry.
func TestIdempotencyReplays(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		_, auth := company(t, db, "SM")
		d := newIdem()
		_, srv := server(t, Config{Store: db, Auth: auth}, d.routes)
		post := func(token, path, body string, headers ...string) (int, http.Header, string) {
			t.Helper()
			return send(t, "POST", srv.URL+path, token, body, headers...)
		}
		status, h, first := post("admin", "/v2/test/pay", `{"amount":150000,"note":"a"}`, key, "order-1")
		if status != 201 || first != `{"status":"success","data":{"amount":150000,"run":1},"meta":{}}` || h.Get(ReplayedHeader) != "" {
			t.Fatalf("first: %d %s (replayed %q)", status, first, h.Get(ReplayedHeader))
		}
		status, h, again := post("admin", "/v2/test/pay", "{\n  \"note\": \"a\",\n  \"amount\": 150000\n}", key, "order-1")
		if status != 201 || again != first || h.Get(ReplayedHeader) != "true" || d.runs.Load() != 1 {
			t.Fatalf("replay: %d %s (replayed %q, %d runs)", status, again, h.Get(ReplayedHeader), d.runs.Load())
		}
		for _, tc := range []struct{ name, token, path, body, key, want string }{
			{"another body", "admin", "/v2/test/pay", `{"amount":150001,"note":"a"}`, "order-1",
				`{"status":"error","error_code":"idempotency_key_reused","message":"the X-Idempotency-Key \"order-1\" was used with another request (route or body): use a new key for a new request"}`},
			{"another route", "admin", "/v2/test/other", `{"amount":150000,"note":"a"}`, "order-1",
				`{"status":"error","error_code":"idempotency_key_reused","message":"the X-Idempotency-Key \"order-1\" was used with another request (route or body): use a new key for a new request"}`},
		} {
			if status, _, body := post(tc.token, tc.path, tc.body, key, tc.key); status != 409 || body != tc.want {
				t.Errorf("%s: %d %s\nwant 409 %s", tc.name, status, body, tc.want)
			}
		}
		// The test mode's keys are its own.
		if status, h, body := post("test", "/v2/test/pay", `{"amount":150000,"note":"a"}`, key, "order-1"); status != 201 || h.Get(ReplayedHeader) != "" || !strings.Contains(body, `"run":2`) {
			t.Errorf("test mode, same key: %d %s, want a run of its own", status, body)
		}
		// Without a key, every request runs.
		post("admin", "/v2/test/pay", `{"amount":1}`)
		if status, _, body := post("admin", "/v2/test/pay", `{"amount":1}`); status != 201 || !strings.Contains(body, `"run":4`) {
			t.Errorf("no key: %d %s, want run 4", status, body)
		}
		for _, bad := range []string{"", "has space", "tab\there", strings.Repeat("k", 256), "ключ"} {
			status, _, body := post("admin", "/v2/test/pay", `{"amount":1}`, key, bad)
			if status != 400 || !strings.Contains(body, `"error_code":"validation_error"`) || !strings.Contains(body, `"errors":{"X-Idempotency-Key":[`) {
				t.Errorf("key %q: %d %s, want 400 naming the header", bad, status, body)
			}
		}
		if status, _, body := post("admin", "/v2/test/pay", `{"amount":1}`, key, "a", key, "b"); status != 400 || !strings.Contains(body, "send one X-Idempotency-Key header, not 2") {
			t.Errorf("two keys: %d %s", status, body)
		}
		if status, _, body := post("admin", "/v2/test/pay", `{"amount":1}`, key, strings.Repeat("k", 255)); status != 201 {
			t.Errorf("a 255-character key: %d %s", status, body)
		}
		// A route that requires a key.
		want := `{"status":"error","error_code":"idempotency_key_required","message":"this request needs an X-Idempotency-Key header (1 to 255 visible ASCII characters), so that a retry never acts twice","errors":{"X-Idempotency-Key":["required"]}}`
		runs := d.runs.Load()
		if status, _, body := post("admin", "/v2/test/refund", `{"amount":1}`); status != 422 || body != want || d.runs.Load() != runs {
			t.Errorf("no key on a required route: %d %s\nwant 422 %s", status, body, want)
		}
		if status, _, body := post("admin", "/v2/test/refund", `{"amount":1}`, key, "refund-1"); status != 201 {
			t.Errorf("required key sent: %d %s", status, body)
		}
		// What is recorded: a 422; what is not: 400, 404, 500.
		status, _, rule := post("admin", "/v2/test/pay", `{"fail":"rule"}`, key, "rule-1")
		if status2, h, rule2 := post("admin", "/v2/test/pay", `{"fail":"rule"}`, key, "rule-1"); status != 422 || status2 != 422 || rule2 != rule || h.Get(ReplayedHeader) != "true" {
			t.Errorf("422: %d %s, then %d %s (replayed %q), want the same answer replayed", status, rule, status2, rule2, h.Get(ReplayedHeader))
		}
		for _, tc := range []struct {
			body   string
			status int
		}{{`{"fail":"internal"}`, 500}, {`{"fail":"not-found"}`, 404}, {`{"amount":"x"}`, 400}} {
			runs := d.runs.Load()
			k := "free-" + fmt.Sprint(tc.status)
			s1, _, b1 := post("admin", "/v2/test/pay", tc.body, key, k)
			s2, h, b2 := post("admin", "/v2/test/pay", tc.body, key, k)
			ran := int64(2)
			if tc.status == 400 {
				ran = 0 // refused before it counts
			}
			if s1 != tc.status || s2 != tc.status || h.Get(ReplayedHeader) != "" || d.runs.Load() != runs+ran {
				t.Errorf("%s: %d %s, then %d %s (replayed %q, %d runs), want the key left free", tc.body, s1, b1, s2, b2, h.Get(ReplayedHeader), d.runs.Load()-runs)
			}
		}
		// The key of a refused body is free for the corrected one.
		if status, _, body := post("admin", "/v2/test/pay", `{"amount":5}`, key, "free-400"); status != 201 {
			t.Errorf("corrected body after a 400: %d %s", status, body)
		}
	})
}

// TestIdempotencyInUse checks that a request arriving while the first with
// its key still runs gets 409 idempotency_key_in_use, and the first's answer
// is replayed once it is done.
func TestIdempotencyInUse(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		_, auth := company(t, db, "SM")
		d := newIdem()
		_, srv := server(t, Config{Store: db, Auth: auth}, d.routes)
		type answer struct {
			status int
			body   string
		}
		done := make(chan answer)
		go func() {
			status, _, body := send(t, "POST", srv.URL+"/v2/test/block", "admin", `{"amount":7}`, key, "k")
			done <- answer{status, body}
		}()
		<-d.entered
		status, _, body := send(t, "POST", srv.URL+"/v2/test/block", "admin", `{"amount":7}`, key, "k")
		want := `{"status":"error","error_code":"idempotency_key_in_use","message":"a request with the X-Idempotency-Key \"k\" is still running: retry later"}`
		if status != 409 || body != want {
			t.Errorf("while running: %d %s\nwant 409 %s", status, body, want)
		}
		close(d.release)
		first := <-done
		if first.status != 201 {
			t.Fatalf("first: %d %s", first.status, first.body)
		}
		status, h, body := send(t, "POST", srv.URL+"/v2/test/block", "admin", `{"amount":7}`, key, "k")
		if status != 201 || body != first.body || h.Get(ReplayedHeader) != "true" || d.runs.Load() != 1 {
			t.Errorf("after: %d %s (replayed %q, %d runs), want the first answer replayed", status, body, h.Get(ReplayedHeader), d.runs.Load())
		}
	})
}

// TestIdempotencyAcrossRestartsAndLeases checks, on both engines, that a
// key outlives its Handler (a new one on the same database replays), that
// a claim left running by a crashed node is in use until its lease has
// passed and is then taken over, and expiry: a key is free again after
// recon.IdempotencyKeyTTL and purged by DeleteExpiredIdempotencyKeys,
// except a key kept as long as its resource.
func TestIdempotencyAcrossRestartsAndLeases(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		ctx := context.Background()
		db := dbtest.OpenStore(t, engine)
		co, auth := company(t, db, "SM")
		clock := testkit.NewClock(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC))
		d1 := newIdem()
		_, srv1 := server(t, Config{Store: db, Auth: auth, Clock: clock}, d1.routes)
		status, _, first := send(t, "POST", srv1.URL+"/v2/test/pay", "admin", `{"amount":9}`, key, "restart")
		if status != 201 {
			t.Fatalf("first: %d %s", status, first)
		}
		srv1.Close()
		// A new node (or the restarted one) on the same database.
		d2 := newIdem()
		_, srv2 := server(t, Config{Store: db, Auth: auth, Clock: clock}, d2.routes)
		status, h, body := send(t, "POST", srv2.URL+"/v2/test/pay", "admin", `{"amount":9}`, key, "restart")
		if status != 201 || body != first || h.Get(ReplayedHeader) != "true" || d2.runs.Load() != 0 {
			t.Errorf("after the restart: %d %s (replayed %q, %d runs), want %s replayed", status, body, h.Get(ReplayedHeader), d2.runs.Load(), first)
		}

		// A node claimed "crashed" and died before answering.
		claim := recon.IdempotencyClaim{Key: "crashed", Route: "POST /v2/test/pay", BodyHash: canonicalHash([]byte(`{"amount":3}`)), Token: "dead node"}
		if state, _, err := db.ClaimIdempotencyKey(ctx, co.Tenant(), claim, clock.Now(), recon.IdempotencyLease); err != nil || state != recon.IdempotencyClaimed {
			t.Fatalf("claim: %v %v", state, err)
		}
		clock.Advance(recon.IdempotencyLease - time.Second)
		if status, _, body := send(t, "POST", srv2.URL+"/v2/test/pay", "admin", `{"amount":3}`, key, "crashed"); status != 409 || !strings.Contains(body, "idempotency_key_in_use") {
			t.Errorf("within the lease: %d %s, want 409 idempotency_key_in_use", status, body)
		}
		clock.Advance(time.Second)
		status, _, body = send(t, "POST", srv2.URL+"/v2/test/pay", "admin", `{"amount":3}`, key, "crashed")
		if status != 201 || d2.runs.Load() != 1 {
			t.Errorf("after the lease: %d %s (%d runs), want the request run", status, body, d2.runs.Load())
		}
		// The dead node's late answer is not recorded over it.
		if err := db.FinishIdempotencyKey(ctx, co.Tenant(), claim, recon.IdempotentAnswer{Status: 500, Body: []byte("late")}, nil); recon.ErrorCode(err) != recon.ECONFLICT {
			t.Errorf("the dead claim's finish: %v, want conflict", err)
		}
		if status, h, again := send(t, "POST", srv2.URL+"/v2/test/pay", "admin", `{"amount":3}`, key, "crashed"); status != 201 || again != body || h.Get(ReplayedHeader) != "true" {
			t.Errorf("replay after takeover: %d %s", status, again)
		}

		// Expiry: a day later the key is free, even for another body; a
		// kept key never expires.
		if status, _, body := send(t, "POST", srv2.URL+"/v2/test/keep", "admin", `{"amount":4}`, key, "kept"); status != 201 {
			t.Fatalf("keep: %d %s", status, body)
		}
		clock.Advance(recon.IdempotencyKeyTTL)
		if status, h, body := send(t, "POST", srv2.URL+"/v2/test/pay", "admin", `{"amount":10}`, key, "restart"); status != 201 || h.Get(ReplayedHeader) != "" {
			t.Errorf("an expired key: %d %s (replayed %q), want a new run", status, body, h.Get(ReplayedHeader))
		}
		clock.Advance(time.Second)
		n, err := db.DeleteExpiredIdempotencyKeys(ctx, clock.Now())
		if err != nil || n != 1 { // "crashed"; "restart" was claimed again a second ago
			t.Errorf("purged %d (%v), want 1", n, err)
		}
		clock.Advance(365 * 24 * time.Hour)
		if n, err := db.DeleteExpiredIdempotencyKeys(ctx, clock.Now()); err != nil || n != 1 {
			t.Errorf("purged %d (%v) a year later, want 1: the kept key stays", n, err)
		}
		if status, h, _ := send(t, "POST", srv2.URL+"/v2/test/keep", "admin", `{"amount":4}`, key, "kept"); status != 201 || h.Get(ReplayedHeader) != "true" {
			t.Errorf("the kept key a year later: %d (replayed %q)", status, h.Get(ReplayedHeader))
		}
	})
}

// TestIdempotencyAcrossNodes runs several apiv2.Handlers (nodes) on one
// PostgreSQL database, each with its own connection pool, and sends the
// same key to all at the same moment: exactly one runs the handler (it
// blocks until every other answer is in), the others get 409
// idempotency_key_in_use; afterwards every node replays the answer.
func TestIdempotencyAcrossNodes(t *testing.T) {
	t.Parallel()
	url := dbtest.NewMigratedURL(t, "postgres")
	const nodes = 4
	const perNode = 3
	d := newIdem()
	var srvs []string
	var auth tokens
	for i := range nodes {
		db := dbtest.OpenURL(t, url)
		if i == 0 {
			_, auth = company(t, db, "SM")
		}
		_, srv := server(t, Config{Store: db, Auth: auth}, d.routes)
		srvs = append(srvs, srv.URL)
	}
	start := make(chan struct{})
	type answer struct {
		status int
		body   string
	}
	answers := make(chan answer, nodes*perNode)
	var wg sync.WaitGroup
	for i := range nodes * perNode {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, _, body := send(t, "POST", srvs[i%nodes]+"/v2/test/block", "admin", `{"amount":1}`, key, "same")
			answers <- answer{status, body}
		}()
	}
	close(start)
	<-d.entered
	for range nodes*perNode - 1 {
		a := <-answers
		if a.status != 409 || !strings.Contains(a.body, `"error_code":"idempotency_key_in_use"`) {
			t.Errorf("a concurrent request: %d %s, want 409 idempotency_key_in_use", a.status, a.body)
		}
	}
	close(d.release)
	wg.Wait()
	if a := <-answers; a.status != 201 {
		t.Fatalf("the request that ran: %d %s", a.status, a.body)
	}
	if n := d.runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times, want once", n)
	}
	for _, srv := range srvs {
		if status, h, _ := send(t, "POST", srv+"/v2/test/block", "admin", `{"amount":1}`, key, "same"); status != 201 || h.Get(ReplayedHeader) != "true" {
			t.Errorf("%s afterwards: %d (replayed %q)", srv, status, h.Get(ReplayedHeader))
		}
	}
}

// TestCanonicalHash checks what counts as the same body.
func TestCanonicalHash(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{`{"a":1,"b":[1,2]}`, "{ \"b\" : [1, 2],\n\"a\":1 }"},
		{``, `  `},
		{`{"a":{"y":1,"x":2}}`, `{"a":{"x":2,"y":1}}`},
	}
	for _, p := range same {
		if canonicalHash([]byte(p[0])) != canonicalHash([]byte(p[1])) {
			t.Errorf("%q and %q hash apart", p[0], p[1])
		}
	}
	differ := [][2]string{
		{`{"a":1}`, `{"a":2}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"a":1}`, ``},
		{`{not json`, `{not  json`},
	}
	for _, p := range differ {
		if canonicalHash([]byte(p[0])) == canonicalHash([]byte(p[1])) {
			t.Errorf("%q and %q hash alike", p[0], p[1])
		}
	}
}
