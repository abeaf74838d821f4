package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// retainedCompany stores a company with the retention and status.
func retainedCompany(t *testing.T, s recon.Store, n, days int, status string) *recon.Company {
	t.Helper()
	c := &recon.Company{FullName: fmt.Sprintf("Retained %d", n), ShortName: fmt.Sprintf("r%d", n), Status: status,
		Config: recon.CompanyConfig{DataStorageDays: days}}
	if err := s.CreateCompany(t.Context(), c); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	return c
}

// ingest stores the rows in batches, without codes, failing t on error.
func ingest(t *testing.T, s recon.Store, tenant recon.TenantID, rows []recon.TransactionInput) {
	t.Helper()
	for start := 0; start < len(rows); start += 500 {
		batch := rows[start:min(start+500, len(rows))]
		if _, err := s.IngestTransactions(t.Context(), tenant, batch, make([]string, len(batch))); err != nil {
			t.Fatalf("IngestTransactions: %v", err)
		}
	}
}

// oldRows returns n incoming transfers of 1000 VND to the account, dated
// from 2026-01-01 over 120 days (all before 2026-05-01), references
// prefix-0, prefix-1, ...
func oldRows(account int64, prefix string, n int) []recon.TransactionInput {
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	out := make([]recon.TransactionInput, n)
	for i := range out {
		d := start.AddDate(0, 0, i%120).Add(time.Duration(i%3600) * time.Second)
		out[i] = tx(account, fmt.Sprintf("%s-%d", prefix, i), d.Format(recon.DateTimeLayout), 1000, 0)
	}
	return out
}

// totals returns the company's transaction total as the listing computes it
// from the per-day counts (no amount filter) and by counting rows (an amount
// filter with a date: every row of these tests has amount_in 1000 unless
// said, and every date is after 2000); it fails t unless the total of the
// amount filter alone, from the per-amount counts, equals the rows counted.
func totals(t *testing.T, s recon.Store, tenant recon.TenantID, f recon.TransactionFilter) (byDays, byRows int64) {
	t.Helper()
	f.Page, f.Limit = 1, 1
	_, byDays, err := s.Transactions(t.Context(), tenant, f)
	if err != nil {
		t.Fatalf("Transactions: %v", err)
	}
	f.AmountIn = ptr(1000)
	byAmounts, byRows := amountTotals(t, s, tenant, f)
	if byAmounts != byRows {
		t.Errorf("filter %s: total %d by amounts, %d by rows", describe(f), byAmounts, byRows)
	}
	return byDays, byRows
}

// amountTotals returns the listing's total of an amount filter as the
// per-amount counts give it (the filter as it is) and as COUNT(*) over the
// rows gives it (the same filter from 2000-01-01, unless f names dates: an
// amount with a date is counted row by row).
func amountTotals(t *testing.T, s recon.Store, tenant recon.TenantID, f recon.TransactionFilter) (byAmounts, byRows int64) {
	t.Helper()
	f.Page, f.Limit = 1, 1
	_, byAmounts, err := s.Transactions(t.Context(), tenant, f)
	if err != nil {
		t.Fatalf("Transactions: %v", err)
	}
	if f.FromDate == "" && f.ToDate == "" {
		f.FromDate = "2000-01-01"
	}
	if _, byRows, err = s.Transactions(t.Context(), tenant, f); err != nil {
		t.Fatalf("Transactions: %v", err)
	}
	return byAmounts, byRows
}

// retentionNow is when the retention tests apply retention: 03:00 on
// 2026-06-15 in the business time zone (UTC+7), still 2026-06-14 in UTC: the
// cut is by the business calendar day (30 days cut before 2026-05-16).
func retentionNow() time.Time {
	return time.Date(2026, 6, 15, 3, 0, 0, 0, time.FixedZone("ICT", 7*3600))
}

func testRetention(t *testing.T, open Open) {
	run(t, "TransactionsAndTotals", open, testRetentionTransactionsAndTotals)
	run(t, "ConcurrentIngestionKeepsTotalsExact", open, testRetentionConcurrentIngestionKeepsTotalsExact)
	run(t, "Deliveries", open, testRetentionDeliveries)
	run(t, "HubEvents", open, testRetentionHubEvents)
}

func testRetentionTransactionsAndTotals(t *testing.T, s recon.Store) {
	now := retentionNow()
	rs := storeAs[recon.RetentionStore](t, s)
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive) // cut: before 2026-05-16 00:00:00
	forever := retainedCompany(t, s, 2, 0, recon.CompanyActive)
	inactive := retainedCompany(t, s, 3, 30, recon.CompanyInactive)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")

	const old = 2100 // more than two chunks
	ingest(t, s, c.Tenant(), oldRows(a.ID, "A", old))
	ingest(t, s, c.Tenant(), []recon.TransactionInput{
		tx(a.ID, "A-keep-1", "2026-05-16 00:00:00", 1000, 0), // the first second kept
		tx(a.ID, "A-keep-2", "2026-06-14 22:00:00", 1000, 0),
	})
	// Account b: balances, a match and discontinuities around the cut.
	order := newOrder(t, s, c.ID, b.ID, "INV-OLD", "DH1", 1000)
	b1 := tx(b.ID, "B1", "2026-05-10 09:00:00", 1000, 0)
	b1.Accumulated = ptr(1100) // the first known balance
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{b1}, []string{""}); err != nil {
		t.Fatal(err)
	}
	paid := pay(t, s, c.Tenant(), b.ID, "B2", "DH1", "", 1000) // dated 2026-03-01: old
	b3 := tx(b.ID, "B3", "2026-05-15 23:59:59", 1000, 0)
	b3.Accumulated = ptr(999) // expected 3100: an old discontinuity
	b4 := tx(b.ID, "B4", "2026-05-16 00:00:00", 1000, 0)
	b4.Accumulated = ptr(5) // expected 1999: a kept discontinuity
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{b3, b4}, []string{"", ""}); err != nil {
		t.Fatal(err)
	}
	// The other companies hold old rows too.
	for _, o := range []*recon.Company{forever, inactive} {
		ingest(t, s, o.Tenant(), oldRows(newAccount(t, s, o.ID, "111").ID, "O", 30))
	}
	if d, r := totals(t, s, c.Tenant(), recon.TransactionFilter{}); d != old+6 || r != old+6 {
		t.Fatalf("before retention: totals %d by days, %d by rows; want %d", d, r, old+6)
	}
	if got, _ := s.MatchDecisions(t.Context(), c.Tenant(), order.ID, 0); len(got) != 1 {
		t.Fatalf("before retention: %d match decisions of the order, want 1", len(got))
	}
	if got, _ := s.BalanceDiscontinuities(t.Context(), c.Tenant()); len(got) != 2 {
		t.Fatalf("before retention: %d discontinuities, want 2", len(got))
	}

	res, err := rs.ApplyRetention(t.Context(), now)
	if err != nil {
		t.Fatalf("ApplyRetention: %v", err)
	}
	diff(t, "retention result", recon.RetentionResult{Transactions: old + 3}, res)

	list := listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 3)
	var refs []string
	for _, tr := range list {
		refs = append(refs, tr.ReferenceNumber)
	}
	diff(t, "kept transactions, newest first", []string{"A-keep-2", "B4", "A-keep-1"}, refs)
	for _, tc := range []struct {
		f    recon.TransactionFilter
		want int64
	}{
		{recon.TransactionFilter{}, 3},
		{recon.TransactionFilter{BankAccountID: a.ID}, 2},
		{recon.TransactionFilter{BankAccountID: b.ID}, 1},
		{recon.TransactionFilter{FromDate: "2026-05-16", ToDate: "2026-05-16"}, 2},
		{recon.TransactionFilter{FromDate: "2026-01-01", ToDate: "2026-05-15"}, 0},
	} {
		if d, r := totals(t, s, c.Tenant(), tc.f); d != tc.want || r != tc.want {
			t.Errorf("filter %+v: totals %d by days, %d by rows; want %d", tc.f, d, r, tc.want)
		}
	}
	// The order outlives the transfer that paid it; the decision goes.
	if got, err := s.MatchDecisions(t.Context(), c.Tenant(), order.ID, 0); err != nil || len(got) != 0 {
		t.Fatalf("match decisions of the order after retention: %v, %v; want none", got, err)
	}
	if o, err := s.Order(t.Context(), c.Tenant(), "INV-OLD"); err != nil || o.Status != recon.OrderCaptured || o.PaidTransactionID != paid {
		t.Fatalf("order after retention: %+v, %v", o, err)
	}
	disc, err := s.BalanceDiscontinuities(t.Context(), c.Tenant())
	if err != nil || len(disc) != 1 || disc[0].Expected != 1999 || disc[0].Reported != 5 {
		t.Fatalf("discontinuities after retention: %+v, %v; want only B4's", disc, err)
	}
	// The running balance goes on from the account, not from old rows.
	b5 := tx(b.ID, "B5", "2026-06-15 01:00:00", 1000, 0)
	b5.Accumulated = ptr(1005)
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{b5}, []string{""}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.BalanceDiscontinuities(t.Context(), c.Tenant()); len(got) != 1 {
		t.Fatalf("a continuous balance after retention made a discontinuity: %+v", got)
	}
	// A reference of a deleted row is new again: stored, not a duplicate.
	again, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{tx(a.ID, "A-0", "2026-06-15 02:00:00", 1000, 0)}, []string{""})
	if err != nil || again[0].Duplicate {
		t.Fatalf("re-ingesting a deleted reference: %+v, %v", again, err)
	}
	// Other companies keep everything.
	for _, o := range []*recon.Company{forever, inactive} {
		if d, r := totals(t, s, o.Tenant(), recon.TransactionFilter{}); d != 30 || r != 30 {
			t.Errorf("company %d (retention %d, %s): totals %d, %d; want 30", o.ID, o.Config.DataStorageDays, o.Status, d, r)
		}
	}
	if res, err := rs.ApplyRetention(t.Context(), now); err != nil || res != (recon.RetentionResult{}) {
		t.Fatalf("second pass: %+v, %v; want nothing deleted", res, err)
	}
	// Once active, the inactive company's retention applies.
	setStatus(t, s, inactive.ID, recon.CompanyActive)
	if res, err := rs.ApplyRetention(t.Context(), now); err != nil || res.Transactions != 30 {
		t.Fatalf("after activation: %+v, %v; want 30 transactions deleted", res, err)
	}
}

func testRetentionConcurrentIngestionKeepsTotalsExact(t *testing.T, s recon.Store) {
	now := retentionNow()
	rs := storeAs[recon.RetentionStore](t, s)
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive)
	a := newAccount(t, s, c.ID, "111")
	ingest(t, s, c.Tenant(), oldRows(a.ID, "OLD", 2500))
	// While retention deletes, batches of new rows and of old-dated rows
	// (a late statement import) arrive for the same account and days.
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, err := rs.ApplyRetention(t.Context(), now)
		errs <- err
	}()
	go func() {
		defer wg.Done()
		for i := range 20 {
			rows := oldRows(a.ID, fmt.Sprintf("LATE%d", i), 50)
			for j := range 10 {
				rows[j] = tx(a.ID, fmt.Sprintf("NEW%d-%d", i, j), "2026-06-01 10:00:00", 1000, 0)
			}
			_, err := s.IngestTransactions(t.Context(), c.Tenant(), rows, make([]string, len(rows)))
			errs <- err
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// However the two interleaved, the day counts agree with the rows.
	if d, r := totals(t, s, c.Tenant(), recon.TransactionFilter{}); d != r {
		t.Fatalf("after concurrent retention and ingestion: %d by days, %d by rows", d, r)
	}
	if _, err := rs.ApplyRetention(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	if d, r := totals(t, s, c.Tenant(), recon.TransactionFilter{}); d != 200 || r != 200 {
		t.Fatalf("after a second pass: %d by days, %d by rows; want the 200 new rows", d, r)
	}
}

func testRetentionDeliveries(t *testing.T, s recon.Store) {
	rs, ds := storeAs[recon.RetentionStore](t, s), storeAs[recon.DeliveryStore](t, s)
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive)
	forever := retainedCompany(t, s, 2, 0, recon.CompanyActive)
	record := func(d *recon.Delivery, status string, next time.Time) {
		t.Helper()
		if err := ds.RecordAttempts(t.Context(), []recon.AttemptOutcome{{Attempt: &recon.DeliveryAttempt{DeliveryID: d.ID, URL: "https://shop.example.vn/ipn"}, Status: status, Next: next}}); err != nil {
			t.Fatal(err)
		}
	}
	delivered, dead := enqueue(t, ds, c.ID, "ORDER_PAID"), enqueue(t, ds, c.ID, "ORDER_PAID")
	retrying, fresh := enqueue(t, ds, c.ID, "ORDER_PAID"), enqueue(t, ds, c.ID, "ORDER_PAID")
	replayed := enqueue(t, ds, c.ID, "ORDER_PAID")
	otherDelivered := enqueue(t, ds, forever.ID, "ORDER_PAID")
	record(delivered, recon.DeliveryDelivered, time.Time{})
	record(dead, recon.DeliveryDead, time.Time{})
	record(retrying, recon.DeliveryPending, time.Now().Add(time.Hour))
	record(replayed, recon.DeliveryDelivered, time.Time{})
	record(otherDelivered, recon.DeliveryDelivered, time.Time{})
	if err := ds.ReplayDelivery(t.Context(), c.Tenant(), replayed.ID, time.Now()); err != nil {
		t.Fatal(err)
	}

	// 29 days on: nothing is old enough. (The deliveries were created by
	// the store's clock, now; the pass is told the time.)
	if res, err := rs.ApplyRetention(t.Context(), time.Now().Add(29*24*time.Hour)); err != nil || res != (recon.RetentionResult{}) {
		t.Fatalf("29 days on: %+v, %v; want nothing deleted", res, err)
	}
	res, err := rs.ApplyRetention(t.Context(), time.Now().Add(31*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "31 days on", recon.RetentionResult{Deliveries: 2}, res)
	for _, d := range []*recon.Delivery{delivered, dead} {
		_, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
		wantCode(t, err, recon.ENOTFOUND, "")
		if attempts, err := ds.DeliveryAttempts(t.Context(), d.ID); err != nil || len(attempts) != 0 {
			t.Fatalf("attempts of deleted delivery %d: %v, %v", d.ID, attempts, err)
		}
	}
	for _, d := range []*recon.Delivery{retrying, fresh, replayed} {
		got, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
		if err != nil || got.Status != recon.DeliveryPending {
			t.Fatalf("pending delivery %d after retention: %+v, %v", d.ID, got, err)
		}
	}
	if attempts, err := ds.DeliveryAttempts(t.Context(), retrying.ID); err != nil || len(attempts) != 1 {
		t.Fatalf("attempts of the retrying delivery: %v, %v; want 1", attempts, err)
	}
	if _, err := ds.Delivery(t.Context(), forever.Tenant(), otherDelivered.ID); err != nil {
		t.Fatalf("other company's delivery: %v", err)
	}
}

// The link tokens' timelines are a log like the deliveries': lines
// older than the deliveries' cutoff go, of the retained company only.
func testRetentionHubEvents(t *testing.T, s recon.Store) {
	rs := storeAs[recon.RetentionStore](t, s)
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive)
	forever := retainedCompany(t, s, 2, 0, recon.CompanyActive)
	var tokens []*recon.LinkToken
	for _, co := range []*recon.Company{c, forever} {
		tokens = append(tokens, newLinkToken(t, s, co.Tenant(), newHubCustomer(t, s, co.Tenant(), "Khách A").XID, time.Minute))
	}
	timeline := func(co *recon.Company, lt *recon.LinkToken) []*recon.HubEventRecord {
		t.Helper()
		log, err := s.HubEventLog(t.Context(), co.Tenant(), lt.XID)
		if err != nil {
			t.Fatal(err)
		}
		return log
	}
	log := timeline(c, tokens[0])
	if len(log) != 1 {
		t.Fatalf("timeline before retention: %+v", log)
	}
	at := log[0].At
	for _, tc := range []struct {
		now  time.Time
		want int64
	}{{at.Add(30*24*time.Hour - time.Second), 0}, {at.Add(30*24*time.Hour + time.Second), 1}} {
		res, err := rs.ApplyRetention(t.Context(), tc.now)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "retention result at "+tc.now.String(), recon.RetentionResult{HubEvents: tc.want}, res)
	}
	if log := timeline(c, tokens[0]); len(log) != 0 {
		t.Fatalf("timeline after retention: %+v", log)
	}
	if log := timeline(forever, tokens[1]); len(log) != 1 {
		t.Fatalf("the company without retention lost its timeline: %+v", log)
	}
}
