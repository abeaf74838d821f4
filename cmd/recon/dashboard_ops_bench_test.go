package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// The operations screens' data for BenchmarkDashboard, added once per
// engine to the company of the 1M transactions by bulk SQL (a benchmark's
// set-up, not a way data arrives): every 10th transfer is an order (100,000;
// a third awaiting payment, 5,000 customers, codes DH1xxxxxx), every 25th an
// exception (40,000 of the four kinds; every 250th resolved), every 3rd an
// ORDER_PAID notification (333,333, with an attempt each: delivered, or
// every 300th dead after 5 attempts, every 999th failing after 2 and due in
// years, so the benchmark's dispatcher leaves it be); every 30th names its
// order.
var (
	opsDataOnce = map[string]*sync.Once{"sqlite": {}, "postgres": {}}
	opsData     = map[string]*opsIDs{}
)

// opsIDs are ids the benchmark's pages name.
type opsIDs struct {
	exception, delivery int64
	invoice             string
}

func loadOpsData(b *testing.B, env *benchEnv) *opsIDs {
	ctx := context.Background()
	db := env.db.SQL()
	start := time.Now()
	u, err := env.db.UserByEmail(ctx, env.companyID, "bench@b.vn")
	if err != nil {
		b.Fatal(err)
	}
	future := "created_at + interval '1000 days'"
	newline := "chr(10)"
	if env.db.Engine() == "sqlite" {
		future = "created_at + 86400000000000" // TIMESTAMP columns hold microseconds on SQLite
		newline = "char(10)"
	}
	steps := []struct {
		what, sql string
		args      []any
	}{
		{"orders", `INSERT INTO orders (company_id, invoice_number, customer_id, status, amount, currency, description, payment_code,
				bank_account_id, paid_amount, created_at, updated_at, search_text)
			SELECT company_id, 'BO-' || CAST(id AS TEXT), 'C' || CAST(id % 5000 AS TEXT), CASE WHEN id % 3 = 0 THEN $2 ELSE $3 END,
				amount_in, 'VND', 'bench order', 'DH' || CAST(id + 1000000 AS TEXT), bank_account_id,
				CASE WHEN id % 3 = 0 THEN 0 ELSE amount_in END, created_at, created_at,
				-- as sqlstore.orderSearchText writes it: invoice, order id, description, customer
				'bo-' || CAST(id AS TEXT) || ` + newline + ` || ` + newline + ` || 'bench order' || ` + newline + ` || 'c' || CAST(id % 5000 AS TEXT)
			FROM transactions WHERE company_id = $1 AND id % 10 = 0`,
			[]any{env.companyID, recon.OrderAwaitingPayment, recon.OrderCaptured}},
		{"exceptions", `INSERT INTO exceptions (transaction_id, company_id, bank_account_id, transaction_date, kind, order_id, reason, resolved)
			SELECT t.id, t.company_id, t.bank_account_id, t.transaction_date,
				CASE t.id % 4 WHEN 0 THEN 'unmatched' WHEN 1 THEN 'underpaid' WHEN 2 THEN 'overpaid' ELSE 'duplicate' END,
				CASE WHEN t.id % 4 = 0 THEN NULL ELSE
					(SELECT o.id FROM orders o WHERE o.company_id = t.company_id AND o.invoice_number = 'BO-' || CAST(t.id - t.id % 10 AS TEXT)) END,
				'bench exception', $2
			FROM transactions t WHERE t.company_id = $1 AND t.id % 25 = 0`, []any{env.companyID, false}},
		{"resolutions", `INSERT INTO exception_resolutions (company_id, transaction_id, action, note, user_id, user_email, previous_kind, previous_reason, created_at)
			SELECT e.company_id, e.transaction_id, 'ignore', 'bench', $2, 'bench@b.vn', e.kind, e.reason, t.created_at
			FROM exceptions e JOIN transactions t ON t.id = e.transaction_id WHERE e.company_id = $1 AND e.transaction_id % 250 = 0`,
			[]any{env.companyID, u.ID}},
		{"resolved", `UPDATE exceptions SET resolved = $2 WHERE company_id = $1 AND transaction_id % 250 = 0`, []any{env.companyID, true}},
		{"deliveries", `INSERT INTO deliveries (company_id, kind, event, payload, status, attempts, next_attempt_at, last_error, created_at, delivered_at, order_id)
			SELECT t.company_id, 'ipn', 'ORDER_PAID', $2,
				CASE WHEN t.id % 999 = 0 THEN 'pending' WHEN t.id % 300 = 0 THEN 'dead' ELSE 'delivered' END,
				CASE WHEN t.id % 999 = 0 THEN 2 WHEN t.id % 300 = 0 THEN 5 ELSE 1 END,
				CASE WHEN t.id % 999 = 0 THEN ` + future + ` ELSE t.created_at END,
				CASE WHEN t.id % 999 = 0 OR t.id % 300 = 0 THEN 'HTTP 503' ELSE '' END,
				t.created_at, CASE WHEN t.id % 999 = 0 OR t.id % 300 = 0 THEN NULL ELSE t.created_at END,
				CASE WHEN t.id % 30 = 0 THEN
					(SELECT o.id FROM orders o WHERE o.company_id = t.company_id AND o.invoice_number = 'BO-' || CAST(t.id AS TEXT)) END
			FROM transactions t WHERE t.company_id = $1 AND t.id % 3 = 0`,
			[]any{env.companyID, []byte(`{"notification_type":"ORDER_PAID","order":{"id":"1","order_invoice_number":"BO-1"}}`)}},
		{"attempts", `INSERT INTO delivery_attempts (delivery_id, at, url, status_code, latency_us, response, error)
			SELECT id, created_at, 'https://shop.example.vn/ipn', CASE WHEN status = 'delivered' THEN 200 ELSE 503 END,
				1000 + id % 50000, '', last_error
			FROM deliveries WHERE company_id = $1`, []any{env.companyID}},
	}
	for _, s := range steps {
		t0 := time.Now()
		res, err := db.ExecContext(ctx, s.sql, s.args...)
		if err != nil {
			b.Fatalf("bench data, %s: %v", s.what, err)
		}
		n, _ := res.RowsAffected()
		b.Logf("%s: %s: %d rows in %s", env.db.Engine(), s.what, n, time.Since(t0).Round(time.Millisecond))
	}
	if err := env.db.Optimize(ctx); err != nil {
		b.Fatal(err)
	}
	if env.db.Engine() == "postgres" {
		for _, table := range []string{"orders", "exceptions", "deliveries", "delivery_attempts"} {
			if _, err := db.ExecContext(ctx, "VACUUM (ANALYZE) "+table); err != nil {
				b.Fatal(err)
			}
		}
	}
	ids := &opsIDs{}
	err = db.QueryRowContext(ctx, `SELECT MAX(transaction_id) FROM exceptions WHERE company_id = $1 AND kind = 'unmatched' AND resolved = $2`,
		env.companyID, false).Scan(&ids.exception)
	if err == nil {
		err = db.QueryRowContext(ctx, `SELECT o.invoice_number, d.id FROM deliveries d JOIN orders o ON o.id = d.order_id
			WHERE d.company_id = $1 AND d.order_id IS NOT NULL ORDER BY d.id DESC LIMIT 1`, env.companyID).Scan(&ids.invoice, &ids.delivery)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: operations data in %s", env.db.Engine(), time.Since(start).Round(time.Second))
	return ids
}

// opsPages are the operations screens BenchmarkDashboard requests besides
// home, exceptions and notifications (in its own list), on that data.
func opsPages(ids *opsIDs) []struct{ name, path string } {
	return []struct{ name, path string }{
		{"ops-exceptions-duplicate", "/dashboard/exceptions?kind=duplicate"},
		{"ops-exceptions-resolved", "/dashboard/exceptions?status=resolved"},
		{"ops-exception", fmt.Sprint("/dashboard/exceptions/", ids.exception)},
		{"ops-resolve-confirm", fmt.Sprintf("/dashboard/exceptions/%d/resolve?resolve=ignore&note=bench", ids.exception)},
		{"ops-orders", "/dashboard/orders"},
		{"ops-orders-awaiting", "/dashboard/orders?order_status=" + recon.OrderAwaitingPayment},
		{"ops-orders-search", "/dashboard/orders?q=BO-50000"},
		{"ops-order", "/dashboard/order?invoice=" + ids.invoice},
		{"ops-notifications-failing", "/dashboard/notifications?status=failing"},
		{"ops-notifications-dead", "/dashboard/notifications?status=dead"},
		{"ops-notifications-webhook", "/dashboard/notifications?kind=webhook"},
		{"ops-delivery", fmt.Sprint("/dashboard/notifications/", ids.delivery)},
		{"ops-replay-failed-confirm", "/dashboard/notifications/replay?since=2026-01-01T00:00"},
	}
}
