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
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// The generator's table sizes beyond what a run pushes (`make bench-external`
// with -seed and -companies, docs/benchmarks.md "Listing at 10M rows and
// beside 10,000 companies"): rows of the same feed put into the database
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
		in := make([]recon.TransactionInput, 1000)
		for i := range in {
			in[i] = loadFeedRow(batchAccount(tg.accounts, n, i), n*1000+i).input()
		}
		if _, err := recon.Ingest(ctx, db, recon.LiveTenant(tg.company), in[999].TransactionDate, in); err != nil {
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
		in := make([]recon.TransactionInput, min(1000, rows-b))
		for j := range in {
			in[j] = loadFeedRow(acct.ID, b+j).input()
		}
		if _, err := recon.Ingest(ctx, db, recon.LiveTenant(co.ID), in[len(in)-1].TransactionDate, in); err != nil {
			return 0, err
		}
	}
	return co.ID, nil
}

// smallTargets returns listing targets for sample of the companies ids
// (evenly spread), each with a reading token issued through the CLI.
func smallTargets(t testing.TB, base, dbURL string, ids []int64, sample int) []*loadTarget {
	t.Helper()
	var out []*loadTarget
	for s := range min(sample, len(ids)) {
		id := ids[s*len(ids)/min(sample, len(ids))]
		tg := &loadTarget{base: base, company: id, token: companyToken(t, dbURL, strconv.FormatInt(id, 10), fmt.Sprintf("reader%d@cuahang.vn", id))}
		out = append(out, tg)
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
	day := loadDay0.Format(time.DateOnly)
	return []listQuery{
		{smallPage1, "limit=20"},
		{"small amount_in", "limit=20&amount_in=151000"},
		{"small reference_number", "limit=20&reference_number=FT26000000333"},
		{"small from_date..to_date", "limit=20&from_date=" + day + "&to_date=" + day},
	}
}

// input is the row as a push gives it.
func (r feedRow) input() recon.TransactionInput {
	return recon.TransactionInput{BankAccountID: r.account, TransactionDate: r.date, AmountIn: r.in, AmountOut: r.out, Content: r.memo, ReferenceNumber: r.ref}
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
