package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"recon"
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
	res, err := recon.Ingest(context.Background(), db, companyID, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Code == "" {
			t.Fatalf("a transfer got no code: %+v", r)
		}
	}
}

func (rc *receiver) unique() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.seen)
}

func (rc *receiver) requests() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
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
	args := append([]string{"serve", "--addr", addr, "--database-url", dbURL, "--log-level", "warn"}, extra...)
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
	waitFor(t, "the server to be healthy", 30*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	return cmd
}

// TestCrashRecovery kills the server with SIGKILL while IPNs are in flight,
// starts it again, and checks that every committed IPN arrives at least once.
func TestCrashRecovery(t *testing.T) {
	bin, err := buildRecon()
	if err != nil {
		t.Fatal(err)
	}
	dbURL := dbtest.NewURL(t, "sqlite")
	addr := freeAddr(t)
	rc := newReceiver(t)
	rc.delay = 50 * time.Millisecond // keep deliveries in flight
	flags := []string{"--sandbox", "--allow-private-targets", "--dispatch-lease", "7s", "--dispatch-timeout", "1s", "--dispatch-workers", "4"}
	proc := startProcess(t, bin, addr, dbURL, flags...)
	m := setupMerchant(t, "http://"+addr, dbURL, rc.URL+"/ipn")
	// make crash-test runs the long form: RECON_CRASH_IPNS=5000.
	n := 120
	if v := os.Getenv("RECON_CRASH_IPNS"); v != "" {
		fmt.Sscan(v, &n)
	}
	for start := 0; start < n; start += recon.MaxIngestBatch {
		enqueueIPNs(t, m, fmt.Sprintf("7%02d", start/recon.MaxIngestBatch), min(recon.MaxIngestBatch, n-start))
	}
	waitFor(t, "the first deliveries", 20*time.Second, func() bool { return rc.requests() >= 10 })
	if err := proc.Process.Kill(); err != nil { // kill -9, deliveries in flight
		t.Fatal(err)
	}
	_ = proc.Wait()
	before := rc.unique()
	if before >= n {
		t.Fatalf("all %d delivered before the crash: the test crashed nothing", n)
	}
	startProcess(t, bin, addr, dbURL, flags...)
	waitFor(t, "every IPN after the restart", 10*time.Minute, func() bool { return rc.unique() == n })
	t.Logf("%d of %d delivered before SIGKILL; all %d after the restart, %d requests in all", before, n, n, rc.requests())
}

// TestReceiverDownThenUp: a receiver failing for a while gets everything once it is back.
func TestReceiverDownThenUp(t *testing.T) {
	dbURL := dbtest.NewURL(t, "sqlite")
	rc := newReceiver(t)
	up := time.Now().Add(1500 * time.Millisecond)
	rc.status = func(int) int {
		if time.Now().Before(up) {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets", "--retry-schedule", "200ms,300ms,500ms")
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	const n = 40
	enqueueIPNs(t, m, "8", n)
	waitFor(t, "every IPN once the receiver is up", 30*time.Second, func() bool { return rc.unique() == n })
	if rc.requests() <= n {
		t.Fatalf("%d requests for %d IPNs: the receiver was never down", rc.requests(), n)
	}
	// Attempts are recorded after the answer: wait until every one is.
	db := dbtest.OpenURL(t, dbURL)
	waitFor(t, "every delivery recorded delivered", 10*time.Second, func() bool {
		ds, err := db.Deliveries(context.Background(), 0, recon.DeliveryFilter{Status: recon.DeliveryDelivered, Limit: 500})
		return err == nil && len(ds) == n
	})
	ds, _ := db.Deliveries(context.Background(), 0, recon.DeliveryFilter{Limit: 1})
	attempts, err := db.DeliveryAttempts(context.Background(), ds[0].ID)
	if err != nil || len(attempts) < 2 || attempts[0].StatusCode != 503 || attempts[len(attempts)-1].StatusCode != 200 {
		for _, a := range attempts {
			t.Logf("attempt %+v", *a)
		}
		t.Fatalf("attempts of delivery %d: %v", ds[0].ID, err)
	}
}

// TestTwoNodes: two servers on one PostgreSQL deliver every IPN exactly once.
func TestTwoNodes(t *testing.T) {
	dbURL := dbtest.NewURL(t, "postgres")
	rc := newReceiver(t)
	base, _, _ := startServer(t, dbURL, "--sandbox", "--allow-private-targets")
	startServer(t, dbURL, "--sandbox", "--allow-private-targets")
	m := setupMerchant(t, base, dbURL, rc.URL+"/ipn")
	const n = 300
	enqueueIPNs(t, m, "9", n)
	waitFor(t, "every IPN", 30*time.Second, func() bool { return rc.unique() == n })
	time.Sleep(300 * time.Millisecond) // let a duplicate, if any, arrive before counting
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for id, times := range rc.seen {
		if times != 1 {
			t.Errorf("delivery %s received %d times", id, times)
		}
	}
	if len(rc.got) != n {
		t.Fatalf("%d requests for %d IPNs", len(rc.got), n)
	}
}
