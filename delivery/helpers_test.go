package delivery_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a loopback HTTP endpoint that records what it receives and
// answers with handle (200 when nil). call counts the requests of the same
// delivery id, from 1.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	byID   map[int64][]received
	total  atomic.Int64
	handle func(w http.ResponseWriter, r *http.Request, call int)
}

func newReceiver(t testing.TB, handle func(w http.ResponseWriter, r *http.Request, call int)) *receiver {
	rc := &receiver{byID: map[int64][]received{}, handle: handle}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id, _ := strconv.ParseInt(r.Header.Get(delivery.HeaderDelivery), 10, 64)
		rc.mu.Lock()
		rc.byID[id] = append(rc.byID[id], received{header: r.Header.Clone(), body: body, at: time.Now()})
		call := len(rc.byID[id])
		rc.mu.Unlock()
		rc.total.Add(1)
		if rc.handle != nil {
			rc.handle(w, r, call)
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

// calls returns what the receiver got for the delivery.
func (rc *receiver) calls(id int64) []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.byID[id]...)
}

// counts returns how many requests each delivery id got.
func (rc *receiver) counts() map[int64]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[int64]int{}
	for id, list := range rc.byID {
		out[id] = len(list)
	}
	return out
}

// newCompany stores a company.
func newCompany(t testing.TB, db *sqlstore.DB, n int) int64 {
	t.Helper()
	c := &recon.Company{FullName: fmt.Sprintf("Company %d Ltd", n), ShortName: fmt.Sprintf("c%d", n), Status: recon.CompanyActive,
		Subscription: "standard", Config: recon.CompanyConfig{DataStorageDays: 30}}
	if err := db.CreateCompany(context.Background(), c); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	return c.ID
}

// setIPN points the company's IPN at url with the secret.
func setIPN(t testing.TB, db *sqlstore.DB, companyID int64, url, secret string) {
	t.Helper()
	if err := db.SetIPN(context.Background(), recon.LiveTenant(companyID), &recon.Target{URL: url, AuthType: recon.AuthSecretKey, Secret: secret, Active: true}); err != nil {
		t.Fatalf("SetIPN: %v", err)
	}
}

// companyWithReceiver stores a company whose IPN goes to a new receiver
// that answers 200.
func companyWithReceiver(t testing.TB, db *sqlstore.DB) (*receiver, int64) {
	t.Helper()
	rc := newReceiver(t, nil)
	c := newCompany(t, db, 1)
	setIPN(t, db, c, rc.URL, "k")
	return rc, c
}

// signingSecret returns the signing secret of the company's IPN target.
func signingSecret(t testing.TB, db *sqlstore.DB, companyID int64) string {
	t.Helper()
	tg, err := db.DeliveryTarget(context.Background(), companyID, recon.DeliveryIPN)
	if err != nil || tg.SigningSecret == "" {
		t.Fatalf("DeliveryTarget = %+v, %v", tg, err)
	}
	return tg.SigningSecret
}

// enqueue stores n IPN deliveries of the company.
func enqueue(t testing.TB, db *sqlstore.DB, companyID int64, n int) []*recon.Delivery {
	t.Helper()
	var out []*recon.Delivery
	for i := range n {
		d := &recon.Delivery{CompanyID: companyID, Kind: recon.DeliveryIPN, Event: "ORDER_PAID",
			Payload: fmt.Appendf(nil, `{"notification_type":"ORDER_PAID","n":%d}`, i)}
		if err := db.EnqueueDelivery(context.Background(), d); err != nil {
			t.Fatalf("EnqueueDelivery: %v", err)
		}
		out = append(out, d)
	}
	return out
}

// start runs d until the test ends, and checks that Run returns nil.
func start(t testing.TB, d *delivery.Dispatcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// status returns the delivery as stored.
func status(t testing.TB, db *sqlstore.DB, id int64) *recon.Delivery {
	t.Helper()
	d, err := db.Delivery(context.Background(), recon.TenantID{}, id)
	if err != nil {
		t.Fatalf("Delivery: %v", err)
	}
	return d
}

// countStatus counts the stored deliveries with the status (DeliveryStats
// does not count delivered ones).
func countStatus(t testing.TB, db *sqlstore.DB, s string) int64 {
	t.Helper()
	var n int64
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM deliveries WHERE status = $1`, s).Scan(&n); err != nil {
		t.Fatalf("count deliveries: %v", err)
	}
	return n
}

// claimCounter is the store with its claims counted.
type claimCounter struct {
	*sqlstore.DB
	claims atomic.Int64
}

func (c *claimCounter) ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*recon.Delivery, error) {
	defer c.claims.Add(1)
	return c.DB.ClaimDeliveries(ctx, node, now, n, lease)
}

// claimTimes is the store with the start of each claim noted.
type claimTimes struct {
	*sqlstore.DB
	mu     sync.Mutex
	starts []time.Time
}

func (c *claimTimes) ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*recon.Delivery, error) {
	c.mu.Lock()
	c.starts = append(c.starts, time.Now())
	c.mu.Unlock()
	return c.DB.ClaimDeliveries(ctx, node, now, n, lease)
}
