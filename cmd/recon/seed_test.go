package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"recon"
	"recon/internal/testkit"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// The generator's table sizes beyond what a run pushes (`make bench-external`
// with -seed and -companies, docs/benchmarks.md "Table sizes beyond the
// pushes, and the server's memory"): rows of the same feed put into the database
// before the measured pushes, through the store's ingestion (recon.Ingest,
// what a push runs after its HTTP decoding), so that every table the
// listing reads (day and amount counts, the change log, balances) is what
// pushes would have left. Seeding is setup, not measured.

// seedFeed ingests rows more of tg's feed (whole batches, from where tg's
// feed stands) into tg's company, then runs the maintenance's statistics
// refresh, and moves tg's feed past them: the measured pushes continue the
// same sequence.
func seedFeed(t testing.TB, dbURL string, tg *loadTarget, rows int) {
	t.Helper()
	db := dbtest.OpenURL(t, dbURL)
	ctx := context.Background()
	start := time.Now()
	first := tg.offset / 1000
	for n := first; n < first+rows/1000; n++ {
		if err := seedBatch(ctx, db, tg.company, 1000, func(i int) feedRow { return loadFeedRow(batchAccount(tg.accounts, n, i), n*1000+i) }); err != nil {
			t.Fatalf("seeding batch %d: %v", n, err)
		}
		if done := n - first + 1; done%1000 == 0 {
			t.Logf("seeded %d of %d rows in %s", done*1000, rows, time.Since(start).Round(time.Second))
		}
	}
	tg.offset += rows / 1000 * 1000
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d rows into company %d in %s", rows, tg.company, time.Since(start).Round(time.Second))
}

// seedCompanies makes n companies, each with one bank account and rowsEach
// rows of the feed on it (its first rows: the same dates, amounts and
// memos as the big company's), from four goroutines, and returns their ids.
func seedCompanies(t testing.TB, dbURL string, n, rowsEach int) []int64 {
	t.Helper()
	db := dbtest.OpenURL(t, dbURL)
	ctx := context.Background()
	start := time.Now()
	ids := make([]int64, n)
	var next atomic.Int64
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				var err error
				if ids[i], err = seedCompany(ctx, db, i, rowsEach); err != nil {
					errs <- fmt.Errorf("seeding company %d: %w", i, err)
					return
				}
				if i > 0 && i%1000 == 0 {
					t.Logf("seeded %d of %d companies in %s", i, n, time.Since(start).Round(time.Second))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := db.Optimize(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("seeded %d companies of %d rows in %s", n, rowsEach, time.Since(start).Round(time.Second))
	return ids
}

// seedCompany makes the i-th small company and its rows.
func seedCompany(ctx context.Context, db *sqlstore.DB, i, rows int) (int64, error) {
	co := &recon.Company{FullName: fmt.Sprintf("Cửa hàng %05d", i), ShortName: fmt.Sprintf("CH%05d", i), Status: recon.CompanyActive}
	if err := db.CreateCompany(ctx, co); err != nil {
		return 0, err
	}
	acct := &recon.BankAccount{CompanyID: co.ID, BankName: "Vietcombank", AccountNumber: fmt.Sprintf("0451%08d", i)}
	if err := db.CreateBankAccount(ctx, acct); err != nil {
		return 0, err
	}
	for b := 0; b < rows; b += 1000 {
		if err := seedBatch(ctx, db, co.ID, min(1000, rows-b), func(j int) feedRow { return loadFeedRow(acct.ID, b+j) }); err != nil {
			return 0, err
		}
	}
	return co.ID, nil
}

// seedBatch ingests the n rows row(0..n-1) into company as one push.
func seedBatch(ctx context.Context, db *sqlstore.DB, company int64, n int, row func(i int) feedRow) error {
	in := make([]recon.TransactionInput, n)
	for i := range in {
		r := row(i)
		in[i] = recon.TransactionInput{BankAccountID: r.account, TransactionDate: r.date, AmountIn: r.in, AmountOut: r.out, Content: r.memo, ReferenceNumber: r.ref}
	}
	_, err := recon.Ingest(ctx, db, recon.LiveTenant(company), in[n-1].TransactionDate, in)
	return err
}

// smallTargets returns listing targets for sample of the companies ids
// (evenly spread), each with a reading token issued through the CLI.
func smallTargets(t testing.TB, base, dbURL string, ids []int64, sample int) []*loadTarget {
	t.Helper()
	sample = min(sample, len(ids))
	out := make([]*loadTarget, sample)
	for s := range out {
		id := ids[s*len(ids)/sample]
		out[s] = &loadTarget{base: base, company: id, token: companyToken(t, dbURL, strconv.FormatInt(id, 10), fmt.Sprintf("reader%d@cuahang.vn", id))}
	}
	return out
}

// smallPage1 names page 1 of the small companies' listing.
const smallPage1 = "small page1"

// smallQueries are the listings measured on the small companies: page 1
// and three filters of §4.3 on their 1,000 rows; none without them.
func smallQueries(small []*loadTarget) []listQuery {
	if len(small) == 0 {
		return nil
	}
	day := testkit.FeedDay0.Format(time.DateOnly)
	return []listQuery{
		{smallPage1, "limit=20"},
		{"small amount_in", "limit=20&amount_in=151000"},
		{"small reference_number", "limit=20&reference_number=FT26000000333"},
		{"small from_date..to_date", "limit=20&from_date=" + day + "&to_date=" + day},
	}
}

// processMemory returns the resident set of process pid now and its peak
// (VmRSS and VmHWM of /proc/PID/status, in MiB).
func processMemory(pid int) (rss, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	if rss == 0 || peak == 0 {
		return 0, 0, fmt.Errorf("no VmRSS/VmHWM in /proc/%d/status", pid)
	}
	return rss, peak, nil
}
