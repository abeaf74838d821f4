package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore/dbtest"
)

// enqueueIPNs makes n orders of the merchant's company and pays each with one
// transfer through the ingestion pipeline, which enqueues n ORDER_PAID IPNs.
func enqueueIPNs(t testing.TB, m *merchantSetup, prefix string, n int) {
	t.Helper()
	db := dbtest.OpenURL(t, m.dbURL)
	var companyID, accountID int64
	fmt.Sscan(m.company, &companyID)
	fmt.Sscan(m.account, &accountID)
	in := make([]recon.TransactionInput, n)
	for i := range n {
		code := fmt.Sprintf("DH%s%05d", prefix, i)
		if err := db.CreateOrder(context.Background(), &recon.Order{CompanyID: companyID, InvoiceNumber: "INV-" + code,
			PaymentCode: code, Amount: 10000, BankAccountID: accountID}); err != nil {
			t.Fatal(err)
		}
		in[i] = recon.TransactionInput{BankAccountID: accountID, TransactionDate: time.Now(), AmountIn: 10000,
			Content: "chuyen tien " + code, ReferenceNumber: "REF-" + code}
	}
	res, err := recon.Ingest(context.Background(), db, recon.LiveTenant(companyID), time.Now(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Code == "" {
			t.Fatalf("a transfer got no code: %+v", r)
		}
	}
}

// buildRecon builds the recon binary once per test process.
var buildRecon = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "recon-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "recon")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// startProcess runs `recon serve` as a separate process and waits for it to be healthy.
func startProcess(t testing.TB, bin, addr, dbURL string, extra ...string) *exec.Cmd {
	t.Helper()
	args := append([]string{"serve", "--addr", addr, "--metrics-addr", "off", "--database-url", dbURL, "--log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "RECON_LOG_FORMAT=json")
	if v := testEnv(dbURL, envSecretKey); v != "" {
		cmd.Env = append(cmd.Env, envSecretKey+"="+v)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testkit.WaitFor(t, "the server to be healthy", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return cmd
}

// sink is the IPN endpoint of the crash tests. Requests wait at the gate
// until it opens (or their sender dies: those are not received); answer
// gives each the status for its delivery id (nil: 200). It records when
// each delivery id was first answered with a 2xx.
type sink struct {
	*httptest.Server
	gate     chan struct{}
	opened   sync.Once
	answer   func(id string) int
	mu       sync.Mutex
	arrived  map[string]time.Time // delivery id → first 2xx
	answered map[string]int       // delivery id → 2xx answers
	requests int
	waiting  int // requests held at the gate
}

func newSink(t testing.TB, gated bool) *sink {
	s := &sink{arrived: map[string]time.Time{}, answered: map[string]int{}}
	if gated {
		s.gate = make(chan struct{})
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		id := r.Header.Get("X-Recon-Delivery")
		if s.gate != nil {
			s.mu.Lock()
			s.waiting++
			s.mu.Unlock()
			select {
			case <-s.gate:
			case <-r.Context().Done(): // the sender died
			}
			s.mu.Lock()
			s.waiting--
			s.mu.Unlock()
			if r.Context().Err() != nil {
				return
			}
		}
		s.mu.Lock()
		s.requests++
		status := http.StatusOK
		if s.answer != nil {
			status = s.answer(id)
		}
		if status/100 == 2 {
			if _, ok := s.arrived[id]; !ok {
				s.arrived[id] = time.Now()
			}
			s.answered[id]++
		}
		s.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	t.Cleanup(s.open) // before Close: let held requests go
	return s
}

// open lets the held requests, and all later ones, through.
func (s *sink) open() {
	if s.gate != nil {
		s.opened.Do(func() { close(s.gate) })
	}
}

func (s *sink) count(f func(s *sink) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s)
}

// all reports whether every id has arrived, and when the last one did.
func (s *sink) all(ids []string) (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last time.Time
	for _, id := range ids {
		at, ok := s.arrived[id]
		if !ok {
			return false, time.Time{}
		}
		if at.After(last) {
			last = at
		}
	}
	return true, last
}

// claimedBy lists the pending deliveries the node holds a claim on.
func claimedBy(t testing.TB, dbURL, node string) []string {
	t.Helper()
	return deliveryIDs(t, dbURL, `SELECT id FROM deliveries WHERE status = 'pending' AND claimed_by = $1 ORDER BY id`, node)
}

// deliveryIDs runs query, which selects delivery ids.
func deliveryIDs(t testing.TB, dbURL, query string, args ...any) []string {
	t.Helper()
	db := dbtest.OpenURL(t, dbURL)
	defer db.Close()
	rows, err := db.SQL().QueryContext(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, fmt.Sprint(id))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// allIDs lists every delivery.
func allIDs(t testing.TB, dbURL string) []string {
	t.Helper()
	return deliveryIDs(t, dbURL, `SELECT id FROM deliveries ORDER BY id`)
}

// crashIPNs is how many IPNs the crash tests enqueue: make crash-test runs
// the long form with RECON_CRASH_IPNS.
func crashIPNs() int {
	n := 200
	if v := os.Getenv("RECON_CRASH_IPNS"); v != "" {
		fmt.Sscan(v, &n)
	}
	return n
}

// recoveryBound is the failure bound of the crash tests: generous for a
// loaded machine, yet well under the 2-minute lease, so that a pass proves
// that the dead node's claims were taken up by its missing heartbeat and
// not by their lease lapsing. The time it takes is logged (make crash-test
// prints it; docs/benchmarks.md records it): about the node timeout (5 s).
const recoveryBound = 75 * time.Second

// TestCrashRecovery kills the server with SIGKILL while every IPN is claimed
// and in flight, starts it again at once, and checks that every IPN arrives,
// the claims of the dead process long before their lease lapses.
func TestCrashRecovery(t *testing.T) {
	bin, err := buildRecon()
	if err != nil {
		t.Fatal(err)
	}
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewURL(t, engine)
		addr := freeAddr(t)
		rc := newSink(t, true)
		// The default lease (2 min), heartbeat and node timeout.
		flags := []string{"--sandbox", "--allow-private-targets", "--dispatch-workers", "16"}
		proc := startProcess(t, bin, addr, dbURL, append(flags, "--node-id", "first")...)
		m := setupMerchant(t, "http://"+addr, dbURL, rc.URL+"/ipn")
		n := crashIPNs()
		for start := 0; start < n; start += recon.MaxIngestBatch {
			enqueueIPNs(t, m, fmt.Sprintf("7%02d", start/recon.MaxIngestBatch), min(recon.MaxIngestBatch, n-start))
		}
		ids := allIDs(t, dbURL)
		testkit.WaitFor(t, "attempts in flight", 30*time.Second, func() bool { return rc.count(func(s *sink) int { return s.waiting }) >= 16 })
		if err := proc.Process.Kill(); err != nil { // kill -9, deliveries in flight
			t.Fatal(err)
		}
		_ = proc.Wait()
		killed := time.Now()
		claimed := claimedBy(t, dbURL, "first")
		if len(claimed) < 16 {
			t.Fatalf("the killed server held %d claims: the test crashed nothing", len(claimed))
		}
		rc.open()
		startProcess(t, bin, addr, dbURL, append(flags, "--node-id", "second")...)
		restarted := time.Now()
		testkit.WaitFor(t, "the dead server's claimed IPNs", recoveryBound, func() bool { ok, _ := rc.all(claimed); return ok })
		_, last := rc.all(claimed)
		testkit.WaitFor(t, "every IPN", 10*time.Minute, func() bool { ok, _ := rc.all(ids); return ok })
		t.Logf("%s: SIGKILL with %d of %d IPNs claimed; restarted in %.1fs; all the claimed ones arrived %.1fs after the restart (%.1fs after the kill); %d requests in all",
			engine, len(claimed), n, restarted.Sub(killed).Seconds(), last.Sub(restarted).Seconds(), last.Sub(killed).Seconds(),
			rc.count(func(s *sink) int { return s.requests }))
	})
}

// TestCrashOfOneNode: of two servers on one PostgreSQL, one is killed with
// claims in flight and not restarted; the other sends its claimed IPNs long
// before their lease lapses.
func TestCrashOfOneNode(t *testing.T) {
	bin, err := buildRecon()
	if err != nil {
		t.Fatal(err)
	}
	dbURL := dbtest.NewURL(t, "postgres")
	rc := newSink(t, true)
	flags := []string{"--sandbox", "--allow-private-targets", "--dispatch-workers", "8"}
	addrA, addrB := freeAddr(t), freeAddr(t)
	a := startProcess(t, bin, addrA, dbURL, append(flags, "--node-id", "a")...)
	startProcess(t, bin, addrB, dbURL, append(flags, "--node-id", "b")...)
	m := setupMerchant(t, "http://"+addrA, dbURL, rc.URL+"/ipn")
	n := crashIPNs()
	for start := 0; start < n; start += recon.MaxIngestBatch {
		enqueueIPNs(t, m, fmt.Sprintf("6%02d", start/recon.MaxIngestBatch), min(recon.MaxIngestBatch, n-start))
	}
	ids := allIDs(t, dbURL)
	// Both nodes' workers are busy, held at the gate: each holds claims.
	testkit.WaitFor(t, "both nodes' attempts in flight", 30*time.Second, func() bool {
		return rc.count(func(s *sink) int { return s.waiting }) >= 16
	})
	if err := a.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.Wait()
	killed := time.Now()
	claimed := claimedBy(t, dbURL, "a")
	if len(claimed) == 0 {
		t.Fatal("the killed node held no claims: the test crashed nothing")
	}
	rc.open()
	testkit.WaitFor(t, "the dead node's claimed IPNs", recoveryBound, func() bool { ok, _ := rc.all(claimed); return ok })
	_, last := rc.all(claimed)
	testkit.WaitFor(t, "every IPN", 10*time.Minute, func() bool { ok, _ := rc.all(ids); return ok })
	t.Logf("node a killed holding %d of %d IPNs; node b sent them all %.1fs after the kill", len(claimed), n, last.Sub(killed).Seconds())
}

// TestReceiverDownThenUp: a receiver failing for a while gets everything
// once it is back. It is down until it has refused every IPN once: events,
// not a wall-clock cut-over, decide when it comes back.
func TestReceiverDownThenUp(t *testing.T) {
	dbURL := dbtest.NewURL(t, "sqlite")
	rc := newSink(t, false)
	const n = 40
	refused := map[string]bool{}
	rc.answer = func(id string) int { // under rc.mu
		if len(refused) < n {
			refused[id] = true
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets", "--retry-schedule", "200ms,300ms,500ms")
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	enqueueIPNs(t, m, "8", n)
	ids := allIDs(t, dbURL)
	if len(ids) != n {
		t.Fatalf("%d deliveries, want %d", len(ids), n)
	}
	testkit.WaitFor(t, "every IPN once the receiver is up", 60*time.Second, func() bool { ok, _ := rc.all(ids); return ok })
	// Attempts are recorded after the answer: wait until every one is.
	db := dbtest.OpenURL(t, dbURL)
	testkit.WaitFor(t, "every delivery recorded delivered", 30*time.Second, func() bool {
		ds, err := db.Deliveries(context.Background(), recon.TenantID{}, recon.DeliveryFilter{Status: recon.DeliveryDelivered, Limit: 500})
		return err == nil && len(ds) == n
	})
	for _, id := range ids {
		var deliveryID int64
		fmt.Sscan(id, &deliveryID)
		attempts, err := db.DeliveryAttempts(context.Background(), deliveryID)
		if err != nil {
			t.Fatal(err)
		}
		if len(attempts) < 2 || attempts[len(attempts)-1].StatusCode != 200 || !slices.ContainsFunc(attempts, func(a *recon.DeliveryAttempt) bool {
			return a.StatusCode == 503
		}) {
			for _, a := range attempts {
				t.Logf("attempt %+v", *a)
			}
			t.Fatalf("attempts of delivery %s: want a 503 and a final 200", id)
		}
	}
}

// TestTwoNodes: two servers on one PostgreSQL deliver every IPN exactly once.
func TestTwoNodes(t *testing.T) {
	dbURL := dbtest.NewURL(t, "postgres")
	rc := newSink(t, false)
	base, _, stopA := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
	_, _, stopB := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	const n = 300
	enqueueIPNs(t, m, "9", n)
	ids := allIDs(t, dbURL)
	testkit.WaitFor(t, "every IPN", 60*time.Second, func() bool { ok, _ := rc.all(ids); return ok })
	// A stopped server has finished every attempt it started: a duplicate,
	// if any, has arrived by then.
	for _, stop := range []func() error{stopA, stopB} {
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for id, times := range rc.answered {
		if times != 1 {
			t.Errorf("delivery %s received %d times", id, times)
		}
	}
	if rc.requests != n {
		t.Fatalf("%d requests for %d IPNs", rc.requests, n)
	}
}
