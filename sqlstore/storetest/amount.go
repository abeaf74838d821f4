package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"recon"
)

// amountRows returns n transactions of the account dated a minute apart
// from start: one in three outgoing with one of two amounts, the others
// incoming with one of seven, as a feed repeats amounts. References are
// prefix-0, prefix-1, ...
func amountRows(account int64, prefix, start string, n int) []recon.TransactionInput {
	t0, err := time.Parse(recon.DateTimeLayout, start)
	if err != nil {
		panic(err)
	}
	out := make([]recon.TransactionInput, n)
	for i := range out {
		in, outAmount := int64(1000+500*(i%7)), int64(0)
		if i%3 == 0 {
			in, outAmount = 0, int64(20000*(1+i%2))
		}
		out[i] = tx(account, fmt.Sprintf("%s-%d", prefix, i), t0.Add(time.Duration(i)*time.Minute).Format(recon.DateTimeLayout), in, outAmount)
	}
	return out
}

// checkAmountTotals fails t unless, for every amount filter of amountRows
// (alone, with each account, with an account number) and the filters on
// 0, the listing's total from the per-amount counts equals the rows
// counted. It returns the rows counted with amount_out = 20000, so that a
// caller can tell a check of nothing.
func checkAmountTotals(t *testing.T, s recon.Store, companyID int64, accounts []*recon.BankAccount) int64 {
	t.Helper()
	filters := []recon.TransactionFilter{{AmountOut: ptr(20000)}, {AmountOut: ptr(40000)}, {AmountIn: ptr(0)},
		{AmountOut: ptr(0)}, {AmountIn: ptr(0), AmountOut: ptr(20000)}, {AmountIn: ptr(20000), AmountOut: ptr(0)}}
	for i := range 7 {
		filters = append(filters, recon.TransactionFilter{AmountIn: ptr(int64(1000 + 500*i))})
	}
	for _, a := range accounts {
		filters = append(filters,
			recon.TransactionFilter{AmountOut: ptr(20000), BankAccountID: a.ID},
			recon.TransactionFilter{AmountIn: ptr(2000), AccountNumber: a.AccountNumber},
			recon.TransactionFilter{AmountOut: ptr(0), BankAccountID: a.ID})
	}
	var n int64
	for i, f := range filters {
		byAmounts, byRows := amountTotals(t, s, companyID, f)
		if byAmounts != byRows {
			t.Errorf("filter %s: total %d by amounts, %d by rows", describe(f), byAmounts, byRows)
		}
		if i == 0 {
			n = byRows
		}
	}
	return n
}

// testAmountTotals checks that the per-amount counts behind an amount
// filter's total stay equal to COUNT(*) after every kind of write:
// concurrent ingestion (duplicates included), statement imports, retention
// running beside ingestion, and test-mode wipes.
func testAmountTotals(t *testing.T, open Open) {
	run(t, "ConcurrentIngestion", open, testAmountTotalsConcurrentIngestion)
	run(t, "RetentionBesideIngestion", open, testAmountTotalsRetentionBesideIngestion)
	run(t, "Wipe", open, testAmountTotalsWipe)
}

func testAmountTotalsConcurrentIngestion(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	accounts := []*recon.BankAccount{newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222"), newAccount(t, s, c.ID, "333")}
	if n := checkAmountTotals(t, s, c.ID, accounts); n != 0 {
		t.Fatalf("an empty company counts %d rows", n)
	}
	// Six writers; writer w mixes accounts w%3 and (w+1)%3, and writers
	// w and w+3 push the same batches (duplicates) at the same time.
	// Batches of other accounts run in parallel on PostgreSQL and
	// share every amount.
	var wg sync.WaitGroup
	errs := make(chan error, 6*5)
	for w := range 6 {
		wg.Go(func() {
			for i := range 5 {
				a, b := accounts[w%3], accounts[(w+1)%3]
				rows := append(amountRows(a.ID, fmt.Sprintf("A%d-%d", w%3, i), "2026-06-01 08:00:00", 30),
					amountRows(b.ID, fmt.Sprintf("B%d-%d", w%3, i), "2026-06-02 08:00:00", 20)...)
				_, err := s.IngestTransactions(t.Context(), c.ID, rows, make([]string, len(rows)))
				errs <- err
			}
		})
	}
	waitOK(t, &wg, errs)
	// A statement import: two batches in one database transaction, the
	// second repeating the first's references; and one rolled back.
	err := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		rows := amountRows(accounts[0].ID, "IMPORT", "2026-06-03 08:00:00", 40)
		for range 2 {
			if _, err := ingest(rows, make([]string, len(rows))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		rows := amountRows(accounts[1].ID, "ROLLED-BACK", "2026-06-03 08:00:00", 40)
		if _, err := ingest(rows, make([]string, len(rows))); err != nil {
			return err
		}
		return recon.Errorf(recon.EINVALID, "the file's last line is broken")
	})
	if recon.ErrorCode(failed) != recon.EINVALID {
		t.Fatalf("failed import: %v", failed)
	}
	if n := checkAmountTotals(t, s, c.ID, accounts); n != 3*5*(5+4)+7 {
		// Per account and batch number: 10 + 7 outgoing rows, 5 + 4 of them 20000.
		t.Fatalf("%d rows with amount_out 20000, want %d", n, 3*5*(5+4)+7)
	}
}

func testAmountTotalsRetentionBesideIngestion(t *testing.T, s recon.Store) {
	now := retentionNow()
	rs := storeAs[recon.RetentionStore](t, s)
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive)
	accounts := []*recon.BankAccount{newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")}
	for _, a := range accounts {
		ingest(t, s, c.ID, amountRows(a.ID, "OLD", "2026-03-01 00:00:00", 2100)) // more than two chunks, before the cut
		ingest(t, s, c.ID, amountRows(a.ID, "NEW", "2026-06-01 00:00:00", 60))
	}
	if n := checkAmountTotals(t, s, c.ID, accounts); n != 2*(350+10) {
		t.Fatalf("before retention: %d rows with amount_out 20000, want %d", n, 2*(350+10))
	}
	// While retention deletes, new rows and old-dated ones (a late
	// import) arrive for the same accounts and amounts.
	var wg sync.WaitGroup
	errs := make(chan error, 11)
	wg.Go(func() {
		_, err := rs.ApplyRetention(t.Context(), now)
		errs <- err
	})
	wg.Go(func() {
		for i := range 10 {
			a := accounts[i%2]
			rows := append(amountRows(a.ID, fmt.Sprintf("LATE%d", i), "2026-04-01 00:00:00", 30),
				amountRows(a.ID, fmt.Sprintf("RECENT%d", i), "2026-06-10 00:00:00", 12)...)
			_, err := s.IngestTransactions(t.Context(), c.ID, rows, make([]string, len(rows)))
			errs <- err
		}
	})
	waitOK(t, &wg, errs)
	checkAmountTotals(t, s, c.ID, accounts)
	if _, err := rs.ApplyRetention(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	// Left: 60 new rows per account (10 of 20000 out) and 12 recent
	// per batch (2 of 20000 out).
	if n := checkAmountTotals(t, s, c.ID, accounts); n != 2*10+10*2 {
		t.Fatalf("after retention: %d rows with amount_out 20000, want %d", n, 2*10+10*2)
	}
}

func testAmountTotalsWipe(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	test := testTenant(t, s, c.ID).ID
	live := newAccount(t, s, c.ID, "111")
	ingest(t, s, c.ID, amountRows(live.ID, "LIVE", "2026-06-01 00:00:00", 30))
	a := newAccount(t, s, test, "111")
	ingest(t, s, test, amountRows(a.ID, "T", "2026-06-01 00:00:00", 30))
	// A wipe while an ingestion of the tenant runs: the ingestion
	// lands before the wipe (and is wiped) or finds no account.
	var wg sync.WaitGroup
	var ingestErr, wipeErr error
	wg.Go(func() {
		rows := amountRows(a.ID, "DURING", "2026-06-02 00:00:00", 30)
		_, ingestErr = s.IngestTransactions(t.Context(), test, rows, make([]string, len(rows)))
	})
	wg.Go(func() { _, wipeErr = s.WipeTestData(t.Context(), c.ID) })
	wg.Wait()
	if wipeErr != nil {
		t.Fatal(wipeErr)
	}
	if ingestErr != nil && recon.ErrorCode(ingestErr) != recon.ENOTFOUND {
		t.Fatalf("ingestion beside a wipe: %v", ingestErr)
	}
	if n := checkAmountTotals(t, s, test, nil); n != 0 {
		t.Fatalf("after the wipe: %d rows with amount_out 20000", n)
	}
	// The tenant starts again with the same amounts; the company kept its own.
	b := newAccount(t, s, test, "222")
	ingest(t, s, test, amountRows(b.ID, "T", "2026-06-03 00:00:00", 30))
	if n := checkAmountTotals(t, s, test, []*recon.BankAccount{b}); n != 5 {
		t.Fatalf("after the wipe and a new batch: %d rows with amount_out 20000, want 5", n)
	}
	if n := checkAmountTotals(t, s, c.ID, []*recon.BankAccount{live}); n != 5 {
		t.Fatalf("the live company: %d rows with amount_out 20000, want 5", n)
	}
}

// waitOK waits for wg, then fails t on the first error its goroutines sent.
func waitOK(t *testing.T, wg *sync.WaitGroup, errs chan error) {
	t.Helper()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// describe names a filter's fields, amounts included (not their pointers).
func describe(f recon.TransactionFilter) string {
	s := fmt.Sprintf("account %d, number %q, dates %q..%q", f.BankAccountID, f.AccountNumber, f.FromDate, f.ToDate)
	if f.AmountIn != nil {
		s += fmt.Sprintf(", amount_in %d", *f.AmountIn)
	}
	if f.AmountOut != nil {
		s += fmt.Sprintf(", amount_out %d", *f.AmountOut)
	}
	return s
}
