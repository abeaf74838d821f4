package delivery_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/delivery"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// ipnBody is an IPN notification of a realistic size (spec §2.8; docs/api.md,
// Payment gateway).
var ipnBody = []byte(`{"timestamp":1772352000,"notification_type":"ORDER_PAID","order":{"id":"10231","order_id":"ORD-10231",` +
	`"order_status":"CAPTURED","order_currency":"VND","order_amount":"1250000.00","order_invoice_number":"INV-2026-0310231",` +
	`"custom_data":[],"user_agent":"Mozilla/5.0","ip_address":"203.113.1.20","order_description":"Order 10231"},` +
	`"transaction":{"id":"88123","payment_method":"BANK_TRANSFER","transaction_id":"FT26060123456","transaction_type":"PAYMENT",` +
	`"transaction_date":"2026-03-01 15:04:05","transaction_status":"APPROVED","transaction_amount":"1250000.00",` +
	`"transaction_currency":"VND","authentication_status":"","card_number":"","card_holder_name":"","card_expiry":"",` +
	`"card_funding_method":"","card_brand":""},"customer":{"id":"77","customer_id":"CUS-77"}}`)

// BenchmarkDispatch measures the dispatcher's throughput: b.N deliveries
// are enqueued beforehand (not timed), then one dispatcher with the default
// settings sends them to a loopback receiver that answers 200 at once, until
// every one is recorded as delivered. The receiver, the dispatcher and, for
// PostgreSQL, the server share the machine's CPUs.
//
//	go test -run '^$' -bench Dispatch -benchtime 20000x ./delivery
func BenchmarkDispatch(b *testing.B) {
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			db := dbtest.OpenStore(b, engine)
			rc := newReceiver(b, nil)
			c := newCompany(b, db, 1)
			setIPN(b, db, c, rc.URL+"/ipn", "s3cret")
			fill(b, db, c, b.N)
			b.ResetTimer()
			took := drain(b, db, rc, &delivery.Dispatcher{Store: db, Client: loopback(), Poll: 10 * time.Millisecond}, b.N)
			b.ReportMetric(float64(b.N)/took.Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkOrderedTarget measures what an ordered target costs (issue 23;
// docs/design.md, D7, "Ordered targets"): b.N deliveries to one target
// whose receiver answers 200 after a fixed service time (a real receiver's
// latency), sent once with the target unordered and once ordered, each on a
// fresh database by one dispatcher with the default settings. It reports
// both rates and their ratio (docs/benchmarks.md, "Ordered and unordered
// targets (issue 23)").
//
//	go test -run '^$' -bench OrderedTarget -benchtime 2000x ./delivery
func BenchmarkOrderedTarget(b *testing.B) {
	const service = 2 * time.Millisecond
	for _, engine := range dbtest.Engines() {
		b.Run(engine, func(b *testing.B) {
			rate := map[bool]float64{}
			for _, ordered := range []bool{false, true} {
				db := dbtest.OpenStore(b, engine)
				rc := newReceiver(b, func(http.ResponseWriter, *http.Request, int) { time.Sleep(service) })
				c := newCompany(b, db, 1)
				tg := &recon.Target{URL: rc.URL + "/ipn", AuthType: recon.AuthSecretKey, Secret: "s3cret", Active: true, Ordered: ordered}
				if err := db.SetIPN(context.Background(), recon.LiveTenant(c), tg); err != nil {
					b.Fatal(err)
				}
				fill(b, db, c, b.N)
				took := drain(b, db, rc, &delivery.Dispatcher{Store: db, Client: loopback()}, b.N)
				rate[ordered] = float64(b.N) / took.Seconds()
			}
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(rate[false], "unordered-deliveries/s")
			b.ReportMetric(rate[true], "ordered-deliveries/s")
			b.ReportMetric(rate[false]/rate[true], "unordered/ordered")
		})
	}
}

// drain runs d until the receiver has got n requests and no delivery is
// pending, and returns how long that took (the timer stops there); then it
// stops d and checks that each of the n was delivered with one request.
func drain(b *testing.B, db *sqlstore.DB, rc *receiver, d *delivery.Dispatcher, n int) time.Duration {
	b.Helper()
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	// Wait without loading the database: the receiver's count first,
	// then the pending rows (the claim's partial index).
	for rc.total.Load() < int64(n) {
		time.Sleep(5 * time.Millisecond)
	}
	for pending(b, db) > 0 {
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	if got := countStatus(b, db, recon.DeliveryDelivered); got != int64(n) {
		b.Fatalf("%d of %d deliveries delivered", got, n)
	}
	if got := rc.total.Load(); got != int64(n) {
		b.Fatalf("%d requests for %d deliveries", got, n)
	}
	return took
}

// fill enqueues n pending IPN deliveries of the company in one statement.
func fill(b *testing.B, db *sqlstore.DB, companyID int64, n int) {
	b.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, err := db.SQL().ExecContext(context.Background(), strings.TrimSpace(`
		WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < $1)
		INSERT INTO deliveries (company_id, kind, event, payload, status, attempts, next_attempt_at, created_at)
		SELECT $2, 'ipn', 'ORDER_PAID', $3, 'pending', 0, $4, $4 FROM seq`), n, companyID, ipnBody, now)
	if err != nil {
		b.Fatal(err)
	}
}

// pending counts the pending deliveries.
func pending(b *testing.B, db *sqlstore.DB) int {
	b.Helper()
	var n int
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM deliveries WHERE status = 'pending'`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
