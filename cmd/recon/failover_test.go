//go:build failover

package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestFailover is `make failover-test` (docs/deploy.md, "The failover
// test"): a pg_auto_failover formation (autofailover_test.go), two `recon
// serve` processes on its multi-host URL, payments pushed through both (an
// order made through the gateway, then a transfer paying it through POST
// /api/v1/transactions, each retried on 503 and on a node that does not
// answer), and an IPN receiver deduplicating by order. Mid-run the primary
// is killed (its keeper and postgres, SIGKILL), later one recon node; then
// the old primary's keeper is started again, rejoins as the standby, and the
// new primary is killed in turn. After each round: every acknowledged
// transfer is stored once, every order captured once, every paid order's
// ORDER_PAID received (one notification id per order), every delivery
// delivered well before a claim's 2-minute lease could have lapsed, and no
// answer was a 5xx other than 503. It prints each write outage: from the
// first write refused to the first write taken again.
func TestFailover(t *testing.T) {
	af := startAutoFailover(t)
	bin, err := buildRecon()
	if err != nil {
		t.Fatal(err)
	}
	dbURL := af.URL()
	rc := newOrderReceiver(t)
	serve := func(node string) *reconNode {
		addr := freeAddr(t)
		cmd := startProcess(t, bin, addr, dbURL, append([]string{"--sandbox", "--allow-private-targets", "--node-id", node}, benchRateLimit...)...)
		return &reconNode{base: "http://" + addr, cmd: cmd}
	}
	a := serve("a")
	m := setupMerchant(t, a.base, dbURL, rc.URL+"/ipn")
	db := dbtest.OpenURL(t, dbURL)

	var old *keeper // the primary killed
	for round, b := range []string{"b1", "b2"} {
		if old != nil {
			// The old primary's keeper starts again: it rejoins as the
			// standby of the new primary (docs/deploy.md, "Rejoining an
			// old primary").
			restarted := time.Now()
			af.run(old)
			want := map[string]string{old.name: "secondary"}
			for _, k := range af.nodes {
				if k != old {
					want[k.name] = "primary"
				}
			}
			af.waitStates(want)
			t.Logf("the old primary %s rejoined as the standby in %.1f s", old.name, time.Since(restarted).Seconds())
		}
		nodes := []*reconNode{a, serve(b)}
		l := &payments{t: t, m: m, nodes: nodes, round: round, acked: map[string]string{}}
		l.start(4)
		l.waitAcked(20)
		primary := af.primary()
		old = primary
		killed := l.killing()
		af.kill(primary)
		l.waitResumed()
		l.waitAcked(l.ackedCount() + 20)
		// One recon node dies too: its requests in flight get no answer
		// and are made again through the other.
		_ = nodes[1].cmd.Process.Signal(syscall.SIGKILL)
		l.waitAcked(l.ackedCount() + 20)
		l.stop()
		down, up := l.outage()
		t.Logf("round %d: write outage %.1f s (kill -9 of the primary %s at 0 s, first write refused at +%.1f s, first taken again at +%.1f s); %d payments acknowledged",
			round+1, up.Sub(down).Seconds(), primary.name, down.Sub(killed).Seconds(), up.Sub(killed).Seconds(), len(l.acked))
		l.check(db, rc)
	}
}

// reconNode is a `recon serve` process.
type reconNode struct {
	base string
	cmd  *exec.Cmd
}

// orderReceiver is the merchant's IPN endpoint: the ORDER_PAID
// notifications by order (invoice number), each with the notification ids
// (X-Recon-Delivery) it came with.
type orderReceiver struct {
	*testkit.Receiver
	mu   sync.Mutex
	paid map[string]map[string]bool // invoice → delivery ids
}

func newOrderReceiver(t *testing.T) *orderReceiver {
	o := &orderReceiver{Receiver: testkit.NewReceiver(t), paid: map[string]map[string]bool{}}
	o.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ipn struct {
			Type  string `json:"notification_type"`
			Order struct {
				Invoice string `json:"order_invoice_number"`
			} `json:"order"`
		}
		if err := json.NewDecoder(r.Body).Decode(&ipn); err != nil || ipn.Type != "ORDER_PAID" {
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.paid[ipn.Order.Invoice] == nil {
			o.paid[ipn.Order.Invoice] = map[string]bool{}
		}
		o.paid[ipn.Order.Invoice][r.Header.Get("X-Recon-Delivery")] = true
	})
	return o
}

// ids returns the notification ids of the invoice's ORDER_PAID.
func (o *orderReceiver) ids(invoice string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.paid[invoice])
}

// payments pushes payments through the recon nodes from a few workers.
type payments struct {
	t     *testing.T
	m     *merchantSetup
	nodes []*reconNode
	round int

	mu        sync.Mutex
	next      int
	acked     map[string]string // invoice → the transfer's reference, acknowledged
	errs      []string          // answers that are never right: a 5xx but 503, a 503 without Retry-After, ...
	killed    time.Time         // when the primary was killed
	down, up  time.Time         // the write outage: first write refused after killed, first taken again after it
	stopping  bool
	resumed   chan struct{}
	resumeOne sync.Once
	wg        sync.WaitGroup
	progress  chan struct{}
}

func (l *payments) start(workers int) {
	l.resumed, l.progress = make(chan struct{}), make(chan struct{}, 1)
	for w := range workers {
		l.wg.Go(func() {
			for {
				l.mu.Lock()
				if l.stopping || len(l.errs) > 0 {
					l.mu.Unlock()
					return
				}
				i := l.next
				l.next++
				l.mu.Unlock()
				l.pay(w, i)
			}
		})
	}
}

func (l *payments) stop() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.wg.Wait()
	if len(l.errs) > 0 {
		l.t.Fatalf("wrong answers during the failover:\n%s", strings.Join(l.errs, "\n"))
	}
}

func (l *payments) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// killing notes that the primary is being killed now: the outage is
// measured from the first write refused after it.
func (l *payments) killing() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed = time.Now()
	return l.killed
}

// waitAcked waits until n payments are acknowledged.
func (l *payments) waitAcked(n int) {
	l.t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		l.mu.Lock()
		got, errs := len(l.acked), len(l.errs)
		l.mu.Unlock()
		if got >= n {
			return
		}
		if errs > 0 {
			l.stop()
		}
		select {
		case <-l.progress:
		case <-deadline:
			l.t.Fatalf("%d payments acknowledged within 90 s, want %d", got, n)
		}
	}
}

// waitResumed waits until a write was refused and a later one taken.
func (l *payments) waitResumed() {
	l.t.Helper()
	select {
	case <-l.resumed:
	case <-time.After(90 * time.Second):
		l.t.Fatalf("writes did not resume within 90 s of the first refused")
	}
}

func (l *payments) outage() (down, up time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down, l.up
}

// wrote notes the end of a write made from start: refused (503) or taken.
// A write taken counts as the end of the outage only when it started after
// the first refused: one in flight at that moment may have been made by a
// backend of the old primary that had not died yet.
func (l *payments) wrote(start time.Time, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !ok && l.down.IsZero() && !l.killed.IsZero():
		l.down = time.Now()
	case ok && !l.down.IsZero() && l.up.IsZero() && start.After(l.down):
		l.up = time.Now()
		l.resumeOne.Do(func() { close(l.resumed) })
	}
}

func (l *payments) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
}

// pay makes order i and pays it: the order through the gateway's checkout,
// its payment code read back, a transfer naming it pushed. Each request is
// made again until it is answered (another node after a node that did not
// answer, the same after a 503).
func (l *payments) pay(worker, i int) {
	invoice := fmt.Sprintf("FO%d-%05d", l.round+1, i)
	form := checkoutForm(l.m.secret, [][2]string{
		{"merchant", l.m.merchantID}, {"operation", "PURCHASE"}, {"payment_method", "BANK_TRANSFER"},
		{"order_invoice_number", invoice}, {"order_amount", "10000"}, {"currency", "VND"},
		{"order_description", "Thanh toán đơn hàng " + invoice}, {"customer_id", "KH001"},
		{"success_url", "https://shop.example.vn/ok"}, {"error_url", "https://shop.example.vn/err"}, {"cancel_url", "https://shop.example.vn/cancel"},
	})
	// A checkout whose answer was lost may have made the order: then the
	// same invoice number is a 409 naming it, and the order is there.
	ok := func(status int, body string) bool {
		return status == http.StatusSeeOther || status == http.StatusConflict && strings.Contains(body, "already exists")
	}
	if !l.request(worker+i, "checkout "+invoice, true, ok, func(base string) (*http.Request, error) {
		req, err := http.NewRequest("POST", base+"/v1/checkout/init", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return req, err
	}) {
		return
	}
	var code string
	if !l.request(worker+i, "order detail "+invoice, false, func(status int, body string) bool {
		var v struct {
			Data struct {
				Payment struct {
					Code string `json:"code"`
				} `json:"payment"`
			} `json:"data"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &v) != nil {
			return false
		}
		code = v.Data.Payment.Code
		return code != ""
	}, func(base string) (*http.Request, error) {
		req, err := http.NewRequest("GET", base+"/v1/order/detail/"+invoice, nil)
		req.SetBasicAuth(l.m.merchantID, l.m.secret)
		return req, err
	}) {
		return
	}
	ref := "REF-" + invoice
	body := fmt.Sprintf(`{"transactions":[{"bank_account_id":%s,"transaction_date":"2026-03-01 10:00:00","amount_in":10000,"transaction_content":"NGUYEN THI LAN chuyen tien %s","reference_number":"%s"}]}`,
		l.m.account, code, ref)
	if !l.request(worker+i, "transfer "+ref, true, func(status int, _ string) bool { return status == 200 }, func(base string) (*http.Request, error) {
		req, err := http.NewRequest("POST", base+"/api/v1/transactions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+l.m.feedToken)
		return req, err
	}) {
		return
	}
	l.mu.Lock()
	l.acked[invoice] = ref
	l.mu.Unlock()
	select {
	case l.progress <- struct{}{}:
	default:
	}
}

// failoverClient gives up on a request after 20 s: a node's own bound on
// reaching a dead host is about 10 s (docs/design.md, "Losing the primary").
var failoverClient = &http.Client{Timeout: 20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// request makes a request until ok accepts its answer, starting at node
// n%len(nodes) and moving to the next node when one does not answer; a
// 503 (with Retry-After) is tried again after 100 ms (a client may wait
// less than Retry-After says). Any other answer is a failure. write says
// whether the request writes, for the outage's measure.
func (l *payments) request(n int, what string, write bool, ok func(status int, body string) bool, build func(base string) (*http.Request, error)) bool {
	deadline := time.Now().Add(2 * time.Minute)
	for try := 0; time.Now().Before(deadline); try++ {
		l.mu.Lock()
		stop := len(l.errs) > 0
		l.mu.Unlock()
		if stop {
			return false
		}
		base := l.nodes[(n+try)%len(l.nodes)].base
		req, err := build(base)
		if err != nil {
			l.fail("%s: %v", what, err)
			return false
		}
		start := time.Now()
		resp, err := failoverClient.Do(req)
		if err != nil {
			// The node is dead (refused), or died with the request in
			// flight (no answer): try the next.
			continue
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case ok(resp.StatusCode, string(raw)):
			if write {
				l.wrote(start, true)
			}
			return true
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			if write {
				l.wrote(start, false)
			}
			time.Sleep(100 * time.Millisecond)
			try-- // the same node
		default:
			l.fail("%s via %s: %d %.300s", what, base, resp.StatusCode, raw)
			return false
		}
	}
	l.fail("%s: not done within 2 minutes", what)
	return false
}

// check makes the assertions of a round (TestFailover). Every delivery must
// end delivered within 60 s of the load's end, half a claim's lease: a claim
// left behind by the outage must not wait for its lease to lapse.
func (l *payments) check(db *sqlstore.DB, rc *orderReceiver) {
	t := l.t
	t.Helper()
	ctx := context.Background()
	prefix := fmt.Sprintf("FO%d-%%", l.round+1)
	rows, err := db.SQL().QueryContext(ctx, `SELECT invoice_number, status, amount, paid_amount FROM orders WHERE invoice_number LIKE $1`, prefix)
	if err != nil {
		t.Fatal(err)
	}
	orders := 0
	for rows.Next() {
		var invoice, status string
		var amount, paid int64
		if err := rows.Scan(&invoice, &status, &amount, &paid); err != nil {
			t.Fatal(err)
		}
		orders++
		if _, ok := l.acked[invoice]; !ok {
			t.Errorf("order %s was made but its payment was not acknowledged", invoice)
		}
		if status != "CAPTURED" || paid != amount {
			t.Errorf("order %s: %s, paid %d of %d: want captured once", invoice, status, paid, amount)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if orders != len(l.acked) {
		t.Errorf("%d orders, %d payments acknowledged", orders, len(l.acked))
	}
	for invoice, ref := range l.acked {
		var n int
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM transactions WHERE bank_account_id = $1 AND reference_number = $2`,
			l.m.account, ref).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("transfer %s of order %s stored %d times", ref, invoice, n)
		}
	}
	end := time.Now()
	for n := -1; n != 0; {
		if err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FROM deliveries WHERE status <> 'delivered'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 && time.Since(end) > 60*time.Second {
			rows, err := db.SQL().QueryContext(ctx, `SELECT id, status, attempts, COALESCE(claimed_by, ''), lease_until, next_attempt_at, last_error
				FROM deliveries WHERE status <> 'delivered' ORDER BY id`)
			if err != nil {
				t.Fatal(err)
			}
			var list []string
			for rows.Next() {
				var id, attempts int64
				var status, node, lastErr string
				var lease sql.NullTime
				var next time.Time
				if err := rows.Scan(&id, &status, &attempts, &node, &lease, &next, &lastErr); err != nil {
					t.Fatal(err)
				}
				list = append(list, fmt.Sprintf("%d %s attempts=%d claimed_by=%q lease_until=%v next=%v error=%q", id, status, attempts, node, lease.Time, next, lastErr))
			}
			rows.Close()
			t.Fatalf("60 s after the load ended, %d deliveries are not delivered:\n%s", n, strings.Join(list, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("round %d: every delivery delivered %.1f s after the load ended", l.round+1, time.Since(end).Seconds())
	for invoice := range l.acked {
		if n := rc.ids(invoice); n != 1 {
			t.Errorf("order %s: %d ORDER_PAID notifications received (by id), want 1", invoice, n)
		}
	}
}
