package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"recon"
)

func newAccount(t *testing.T, s recon.Store, companyID int64, number string) *recon.BankAccount {
	t.Helper()
	b := &recon.BankAccount{CompanyID: companyID, BankName: "Vietcombank", AccountNumber: number, HolderName: "CONG TY A", SubAccounts: []string{"VA" + number}}
	if err := s.CreateBankAccount(t.Context(), b); err != nil {
		t.Fatalf("CreateBankAccount: %v", err)
	}
	return b
}

func tx(account int64, ref string, date string, in, out int64) recon.TransactionInput {
	d, err := time.Parse(recon.DateTimeLayout, date)
	if err != nil {
		panic(err)
	}
	return recon.TransactionInput{BankAccountID: account, TransactionDate: d, AmountIn: in, AmountOut: out,
		Content: "chuyen tien " + ref, ReferenceNumber: ref}
}

func ptr(n int64) *int64 { return &n }

// listAll returns the first page of up to 20 with the filter, failing t on error.
func listAll(t *testing.T, s recon.Store, tenant recon.TenantID, f recon.TransactionFilter, wantRows int) []*recon.Transaction {
	t.Helper()
	f.Page, f.Limit = 1, 20
	list, total, err := s.Transactions(t.Context(), tenant, f)
	if err != nil {
		t.Fatalf("Transactions: %v", err)
	}
	if len(list) != wantRows || total != int64(wantRows) {
		t.Fatalf("Transactions: %d rows, total %d; want %d", len(list), total, wantRows)
	}
	return list
}

func codesFor(in []recon.TransactionInput) []string {
	codes := make([]string, len(in))
	for i := range in {
		codes[i] = "DH" + in[i].ReferenceNumber
	}
	return codes
}

func testBankAccount(t *testing.T, open Open) {
	run(t, "CreateReadList", open, testBankAccountCreateReadList)
	run(t, "Conflicts", open, testBankAccountConflicts)
}

func testBankAccountCreateReadList(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a := newAccount(t, s, c.ID, "0071000123456")
	b := newAccount(t, s, c.ID, "19036688")
	newAccount(t, s, other.ID, "0071000123456") // the same number in another company is fine
	recent(t, "CreatedAt", a.CreatedAt)
	got, err := s.BankAccount(t.Context(), c.Tenant(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "bank account", a, got)
	list, err := s.BankAccounts(t.Context(), c.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "bank accounts", []*recon.BankAccount{a, b}, list)
	_, err = s.BankAccount(t.Context(), other.Tenant(), a.ID)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("bank account %d not found", a.ID))
	got, err = s.BankAccountByID(t.Context(), a.ID)
	if err != nil || got.CompanyID != c.ID {
		t.Fatalf("BankAccountByID: %v %v", got, err)
	}
}

func testBankAccountConflicts(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	newAccount(t, s, c.ID, "123")
	err := s.CreateBankAccount(t.Context(), &recon.BankAccount{CompanyID: c.ID, BankName: "Vietcombank", AccountNumber: "123"})
	wantCode(t, err, recon.ECONFLICT, "")
	err = s.CreateBankAccount(t.Context(), &recon.BankAccount{CompanyID: 999, BankName: "MBBank", AccountNumber: "1"})
	wantCode(t, err, recon.ENOTFOUND, "company 999 not found")
}

func testTransactions(t *testing.T, open Open) {
	run(t, "IngestAndList", withAccount(open), testTransactionsIngestAndList)
	run(t, "Duplicates", open, testTransactionsDuplicates)
	run(t, "LargeBatchIDs", open, testTransactionsLargeBatchIDs)
	run(t, "ConcurrentDuplicates", withAccount(open), testTransactionsConcurrentDuplicates)
	run(t, "TenantIsolation", open, testTransactionsTenantIsolation)
	run(t, "ConcurrentMixedAccounts", open, testTransactionsConcurrentMixedAccounts)
	run(t, "ConcurrentCallsFailAlone", open, testTransactionsConcurrentCallsFailAlone)
	run(t, "Filters", open, testTransactionsFilters)
	run(t, "DeepPages", open, testTransactionsDeepPages)
	run(t, "TotalsOverBuckets", open, testTransactionsTotalsOverBuckets)
	run(t, "BalanceDiscontinuity", withAccount(open), testTransactionsBalanceDiscontinuity)
	run(t, "Recode", withAccount(open), testTransactionsRecode)
	run(t, "VersionFollowsChanges", open, testTransactionsVersionFollowsChanges)
}

func testTransactionsIngestAndList(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	in := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 08:00:00", 100_000, 0),
		tx(a.ID, "R2", "2026-03-02 09:30:15", 0, 30_000),
		tx(a.ID, "R3", "2026-03-02 23:59:59", 2_500_000, 0),
	}
	in[2].SubAccount = "VA111"
	codes := []string{"DH1001", "", "DH1003"}
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), in, codes)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.ID <= 0 || r.Duplicate || r.Code != codes[i] {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	list, total, err := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	if total != 3 || len(list) != 3 {
		t.Fatalf("total %d, %d rows", total, len(list))
	}
	got := list[0]
	want := &recon.Transaction{ID: res[2].ID, CompanyID: c.ID, BankAccountID: a.ID, BankName: "Vietcombank", AccountNumber: "111",
		TransactionDate: time.Date(2026, 3, 2, 23, 59, 59, 0, time.UTC), AmountIn: 2_500_000, Accumulated: 2_570_000,
		Content: "chuyen tien R3", ReferenceNumber: "R3", Code: "DH1003", SubAccount: "VA111", CreatedAt: got.CreatedAt}
	recent(t, "CreatedAt", got.CreatedAt)
	diff(t, "newest transaction", want, got)
	// Running balance in bank order: 100000, 70000, 2570000.
	if list[1].Accumulated != 70_000 || list[2].Accumulated != 100_000 || list[1].Code != "" {
		t.Fatalf("balances %d %d, code %q", list[1].Accumulated, list[2].Accumulated, list[1].Code)
	}
}

func testTransactionsDuplicates(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	first := []recon.TransactionInput{tx(a.ID, "R1", "2026-03-01 08:00:00", 100, 0)}
	r1, err := s.IngestTransactions(t.Context(), c.Tenant(), first, []string{"DH1"})
	if err != nil {
		t.Fatal(err)
	}
	// Same reference on the same account (stored, and twice in the batch), and on another account.
	batch := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-05 08:00:00", 999, 0),
		tx(a.ID, "R2", "2026-03-05 08:00:00", 5, 0),
		tx(a.ID, "R2", "2026-03-05 08:00:00", 5, 0),
		tx(b.ID, "R1", "2026-03-05 08:00:00", 7, 0),
	}
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), batch, []string{"X", "DH2", "DH2", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []recon.IngestResult{
		{ID: r1[0].ID, Code: "DH1", Duplicate: true},
		{ID: res[1].ID, Code: "DH2"},
		{ID: res[1].ID, Code: "DH2", Duplicate: true},
		{ID: res[3].ID},
	}
	diff(t, "results", want, res)
	_, total, _ := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20})
	if total != 3 {
		t.Fatalf("total %d, want 3", total)
	}
	list := listAll(t, s, c.Tenant(), recon.TransactionFilter{BankAccountID: a.ID}, 2)
	if list[0].Accumulated != 105 { // the duplicate R1 (999) and R2 did not move the balance
		t.Fatalf("balance %d, want 105", list[0].Accumulated)
	}
}

// Over two full insert statements and a remainder, on two accounts,
// with stored references in the second statement (so the batch is
// inserted again without them): every result names its own row.
func testTransactionsLargeBatchIDs(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	stored := []recon.TransactionInput{tx(a.ID, "R700", "2026-03-01 08:00:00", 1, 0), tx(b.ID, "R701", "2026-03-01 08:00:00", 1, 0)}
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), stored, codesFor(stored)); err != nil {
		t.Fatal(err)
	}
	var in []recon.TransactionInput
	for i := range 1203 {
		in = append(in, tx([]int64{a.ID, b.ID}[i%2], fmt.Sprintf("R%d", i), "2026-03-02 08:00:00", int64(1000+i), 0))
	}
	for round := range 2 { // the second time, every row is a duplicate
		res, err := s.IngestTransactions(t.Context(), c.Tenant(), in, codesFor(in))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			dup := round == 1 || i == 700 || i == 701
			got, err := s.Transaction(t.Context(), c.Tenant(), r.ID)
			if err != nil || r.Duplicate != dup || got.BankAccountID != in[i].BankAccountID || got.ReferenceNumber != in[i].ReferenceNumber {
				t.Fatalf("round %d, row %d (%s): result %+v names %+v (%v)", round, i, in[i].ReferenceNumber, r, got, err)
			}
		}
	}
}

func testTransactionsConcurrentDuplicates(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	var in []recon.TransactionInput
	for i := range 50 {
		in = append(in, tx(a.ID, fmt.Sprintf("R%d", i), "2026-03-01 08:00:00", 1000, 0))
	}
	var wg sync.WaitGroup
	ids := make([][]recon.IngestResult, 6)
	errs := make([]error, 6)
	for w := range 6 {
		wg.Go(func() { ids[w], errs[w] = s.IngestTransactions(t.Context(), c.Tenant(), in, codesFor(in)) })
	}
	wg.Wait()
	fresh := 0
	for w := range 6 {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		for i, r := range ids[w] {
			if r.ID != ids[0][i].ID {
				t.Fatalf("worker %d row %d: id %d, worker 0 got %d", w, i, r.ID, ids[0][i].ID)
			}
			if !r.Duplicate {
				fresh++
			}
		}
	}
	_, total, _ := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20})
	if fresh != 50 || total != 50 {
		t.Fatalf("%d rows stored fresh, total %d; want 50 and 50", fresh, total)
	}
}

func testTransactionsTenantIsolation(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a := newAccount(t, s, c.ID, "111")
	o := newAccount(t, s, other.ID, "111")
	_, err := s.IngestTransactions(t.Context(), c.Tenant(), []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 08:00:00", 1, 0), tx(o.ID, "R2", "2026-03-01 08:00:00", 1, 0),
	}, []string{"", ""})
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("bank account %d not found in company %d", o.ID, c.ID))
	// Nothing of the batch was stored.
	if _, total, _ := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{Page: 1, Limit: 20}); total != 0 {
		t.Fatalf("partial write: total %d", total)
	}
	if _, err := s.IngestTransactions(t.Context(), other.Tenant(), []recon.TransactionInput{tx(o.ID, "R9", "2026-03-01 08:00:00", 1, 0)}, []string{""}); err != nil {
		t.Fatal(err)
	}
	// The other company's account number is the same; filters never cross companies.
	for _, f := range []recon.TransactionFilter{{}, {AccountNumber: "111"}, {BankAccountID: o.ID}, {ReferenceNumber: "R9"}} {
		f.Page, f.Limit = 1, 20
		list, total, err := s.Transactions(t.Context(), c.Tenant(), f)
		if err != nil || total != 0 || len(list) != 0 {
			t.Fatalf("filter %+v: %d rows, total %d, %v", f, len(list), total, err)
		}
	}
}

// Concurrent batches each mixing two of four accounts 60/40, every
// batch pushed twice at once: group commit may store overlapping
// calls together or apart, and still every reference is stored once,
// both pushes of a batch get the same ids, and each account's running
// balance follows its rows in the order they were stored.
func testTransactionsConcurrentMixedAccounts(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	var accounts []int64
	for _, n := range []string{"111", "222", "333", "444"} {
		accounts = append(accounts, newAccount(t, s, c.ID, n).ID)
	}
	const batches, rows = 12, 20
	in := make([][]recon.TransactionInput, batches)
	for b := range in {
		for i := range rows {
			acct := accounts[b%4]
			if i%5 >= 3 {
				acct = accounts[(b+1)%4]
			}
			in[b] = append(in[b], tx(acct, fmt.Sprintf("M%d-%d", b, i), "2026-03-01 08:00:00", int64(1+b*rows+i), 0))
		}
	}
	res := make([][]recon.IngestResult, 2*batches)
	errs := make([]error, 2*batches)
	var wg sync.WaitGroup
	for w := range 2 * batches {
		b := w % batches
		wg.Go(func() { res[w], errs[w] = s.IngestTransactions(t.Context(), c.Tenant(), in[b], codesFor(in[b])) })
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("push %d: %v", w, err)
		}
	}
	for b := range batches {
		for i := range rows {
			first, second := res[b][i], res[b+batches][i]
			if first.ID != second.ID || first.Duplicate == second.Duplicate {
				t.Fatalf("batch %d row %d: the two pushes got %+v and %+v; want one id, one of them a duplicate", b, i, first, second)
			}
		}
	}
	for _, acct := range accounts {
		var got []*recon.Transaction
		for page := 1; ; page++ {
			list, total, err := s.Transactions(t.Context(), c.Tenant(), recon.TransactionFilter{BankAccountID: acct, Page: page, Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, list...)
			if int64(len(got)) >= total || len(list) == 0 {
				break
			}
		}
		// 3 batches put 12 rows on the account, 3 others 8.
		if len(got) != 3*12+3*8 {
			t.Fatalf("account %d: %d rows stored, want %d", acct, len(got), 3*12+3*8)
		}
		slices.SortFunc(got, func(a, b *recon.Transaction) int { return cmp.Compare(a.ID, b.ID) })
		var balance int64
		for _, r := range got {
			balance += r.AmountIn - r.AmountOut
			if r.Accumulated != balance {
				t.Fatalf("account %d, transaction %d (%s): balance %d, want %d after the rows stored before it", acct, r.ID, r.ReferenceNumber, r.Accumulated, balance)
			}
		}
	}
}

// Concurrent calls may be stored together (group commit); one call's
// error must still be its own.
func testTransactionsConcurrentCallsFailAlone(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a := newAccount(t, s, c.ID, "111")
	o := newAccount(t, s, other.ID, "222")
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for w := range 20 {
		acct := a.ID
		if w == 7 {
			acct = o.ID // another company's account: this call alone fails
		}
		wg.Go(func() {
			in := []recon.TransactionInput{tx(acct, fmt.Sprintf("W%d", w), "2026-03-01 08:00:00", 100, 0)}
			_, errs[w] = s.IngestTransactions(t.Context(), c.Tenant(), in, []string{""})
		})
	}
	wg.Wait()
	for w, err := range errs {
		if w == 7 {
			wantCode(t, err, recon.ENOTFOUND, "")
		} else if err != nil {
			t.Fatalf("call %d failed: %v", w, err)
		}
	}
	listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 19)
}

func testTransactionsFilters(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	in := []recon.TransactionInput{
		tx(a.ID, "A1", "2026-03-01 00:00:00", 100, 0),
		tx(a.ID, "A2", "2026-03-01 23:59:59", 200, 0),
		tx(a.ID, "A3", "2026-03-02 12:00:00", 0, 50),
		tx(b.ID, "B1", "2026-03-02 12:00:00", 100, 0),
		tx(b.ID, "B2", "2026-03-03 00:00:00", 300, 0),
	}
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), in, codesFor(in)); err != nil {
		t.Fatal(err)
	}
	refs := func(f recon.TransactionFilter) (string, int64) {
		if f.Page == 0 {
			f.Page = 1
		}
		if f.Limit == 0 {
			f.Limit = 20
		}
		list, total, err := s.Transactions(t.Context(), c.Tenant(), f)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, x := range list {
			out += x.ReferenceNumber + " "
		}
		return out, total
	}
	tests := []struct {
		f     recon.TransactionFilter
		want  string
		total int64
	}{
		{recon.TransactionFilter{}, "B2 B1 A3 A2 A1 ", 5},
		{recon.TransactionFilter{BankAccountID: a.ID}, "A3 A2 A1 ", 3},
		{recon.TransactionFilter{AccountNumber: "222"}, "B2 B1 ", 2},
		{recon.TransactionFilter{AccountNumber: "222", BankAccountID: a.ID}, "", 0},
		{recon.TransactionFilter{AccountNumber: "999"}, "", 0},
		{recon.TransactionFilter{FromDate: "2026-03-01", ToDate: "2026-03-01"}, "A2 A1 ", 2},
		{recon.TransactionFilter{FromDate: "2026-03-02"}, "B2 B1 A3 ", 3},
		{recon.TransactionFilter{ToDate: "2026-03-02", BankAccountID: b.ID}, "B1 ", 1},
		{recon.TransactionFilter{ReferenceNumber: "A2"}, "A2 ", 1},
		{recon.TransactionFilter{AmountIn: ptr(100)}, "B1 A1 ", 2},
		{recon.TransactionFilter{AmountOut: ptr(50)}, "A3 ", 1},
		{recon.TransactionFilter{AmountIn: ptr(100), FromDate: "2026-03-02"}, "B1 ", 1},
		{recon.TransactionFilter{AmountIn: ptr(0)}, "A3 ", 1},
		{recon.TransactionFilter{AmountOut: ptr(0)}, "B2 B1 A2 A1 ", 4},
		{recon.TransactionFilter{AmountIn: ptr(100), AmountOut: ptr(0)}, "B1 A1 ", 2},
		{recon.TransactionFilter{AmountIn: ptr(100), AmountOut: ptr(50)}, "", 0},
		{recon.TransactionFilter{Page: 2, Limit: 2}, "A3 A2 ", 5},
		{recon.TransactionFilter{Page: 3, Limit: 2}, "A1 ", 5},
		{recon.TransactionFilter{Page: 4, Limit: 2}, "", 5},
	}
	for _, tt := range tests {
		got, total := refs(tt.f)
		if got != tt.want || total != tt.total {
			t.Errorf("filter %+v: got %q total %d, want %q total %d", tt.f, got, total, tt.want, tt.total)
		}
	}
}

// testTransactionsTotalsOverBuckets: the listing's total with dates, which
// sums the buckets of 32 days a range holds whole and the day rows of its
// ends (docs/design.md, "Totals per bucket of days"), is the number of rows
// in range: within a bucket, across one edge, one bucket exactly, several
// from a bucket's first day to another's last, open on either side, of one
// account, past the rows; beside another company with rows on the same days.
func testTransactionsTotalsOverBuckets(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	o := newAccount(t, s, other.ID, "333")
	start := time.Date(2025, 12, 20, 0, 0, 0, 0, time.UTC)
	var in, otherIn []recon.TransactionInput
	dates := map[int64][]string{} // by account
	for day := range 200 {
		for k := range 1 + day%3 {
			at := start.AddDate(0, 0, day).Add(time.Duration(9+k) * time.Hour)
			account := a.ID
			if (day+k)%2 == 0 {
				account = b.ID
			}
			in = append(in, tx(account, fmt.Sprintf("R%d-%d", day, k), at.Format(time.DateTime), 1000, 0))
			dates[account] = append(dates[account], at.Format(time.DateOnly))
		}
		otherIn = append(otherIn, tx(o.ID, fmt.Sprintf("O%d", day), start.AddDate(0, 0, day).Format(time.DateTime), 1000, 0))
	}
	ingest(t, s, c.Tenant(), in)
	ingest(t, s, other.Tenant(), otherIn)

	// next is the first day of the bucket after start's, in days from start.
	d0 := int(start.Unix() / 86400)
	next := (d0>>5+1)<<5 - d0
	day := func(n int) string { return start.AddDate(0, 0, n).Format(time.DateOnly) }
	for _, f := range []recon.TransactionFilter{
		{FromDate: day(next + 2), ToDate: day(next + 5)},    // within a bucket
		{FromDate: day(next - 3), ToDate: day(next + 10)},   // across an edge, no bucket whole
		{FromDate: day(next), ToDate: day(next + 31)},       // one bucket exactly
		{FromDate: day(next - 3), ToDate: day(next + 40)},   // one bucket and both ends
		{FromDate: day(next), ToDate: day(next + 3*32 - 1)}, // three buckets exactly
		{FromDate: day(1), ToDate: day(198)},                // almost everything
		{FromDate: day(77)},                                 // open after
		{ToDate: day(100)},                                  // open before
		{FromDate: day(10), ToDate: day(150), BankAccountID: a.ID},
		{FromDate: day(250), ToDate: day(300)}, // past the rows
	} {
		var want int64
		for account, ds := range dates {
			if f.BankAccountID != 0 && f.BankAccountID != account {
				continue
			}
			for _, d := range ds {
				if (f.FromDate == "" || d >= f.FromDate) && (f.ToDate == "" || d <= f.ToDate) {
					want++
				}
			}
		}
		f.Page, f.Limit = 1, 20
		if _, total, err := s.Transactions(t.Context(), c.Tenant(), f); err != nil || total != want {
			t.Errorf("total of %s..%s (account %d) = %d, %v; want %d", f.FromDate, f.ToDate, f.BankAccountID, total, err, want)
		}
	}
}

// testTransactionsDeepPages: pages from the 1000th row on start from the
// day of their first row, found by the day counts (docs/design.md, "Deep
// pages"), and hold what walking every row would: rows at the first and
// last second of a day, rows sharing a time, on two accounts, with account
// and date filters, beside another company with rows on the same days.
func testTransactionsDeepPages(t *testing.T, s recon.Store) {
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a, b := newAccount(t, s, c.ID, "111"), newAccount(t, s, c.ID, "222")
	o := newAccount(t, s, other.ID, "333")
	type row struct {
		in recon.TransactionInput
		id int64
	}
	var rows []row
	var in, otherIn []recon.TransactionInput
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for day := range 14 {
		for k := range 150 + day { // days of different sizes
			at := start.AddDate(0, 0, day).Add(time.Duration(k*500) * time.Second)
			switch {
			case k == 1:
				at = start.AddDate(0, 0, day) // the day's first second, twice
			case k == 149+day:
				at = start.AddDate(0, 0, day+1).Add(-time.Second) // its last
			}
			account := a.ID
			if k%3 == 0 {
				account = b.ID
			}
			in = append(in, recon.TransactionInput{BankAccountID: account, TransactionDate: at, AmountIn: 1000,
				Content: "CT", ReferenceNumber: fmt.Sprintf("D%d-%d", day, k)})
			if k%10 == 0 {
				otherIn = append(otherIn, recon.TransactionInput{BankAccountID: o.ID, TransactionDate: at, AmountIn: 1000,
					Content: "CT", ReferenceNumber: fmt.Sprintf("O%d-%d", day, k)})
			}
		}
	}
	for first := 0; first < len(in); first += 500 {
		batch := in[first:min(first+500, len(in))]
		res, err := s.IngestTransactions(t.Context(), c.Tenant(), batch, make([]string, len(batch)))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			rows = append(rows, row{batch[i], r.ID})
		}
	}
	ingest(t, s, other.Tenant(), otherIn)
	slices.SortFunc(rows, func(x, y row) int { // newest first, as listed
		if c := y.in.TransactionDate.Compare(x.in.TransactionDate); c != 0 {
			return c
		}
		return cmp.Compare(y.id, x.id)
	})
	expected := func(f recon.TransactionFilter) []string {
		var out []string
		for _, r := range rows {
			d := r.in.TransactionDate.Format(recon.DateLayout)
			if f.BankAccountID != 0 && r.in.BankAccountID != f.BankAccountID || f.FromDate != "" && d < f.FromDate || f.ToDate != "" && d > f.ToDate {
				continue
			}
			out = append(out, r.in.ReferenceNumber)
		}
		return out
	}
	for _, f := range []recon.TransactionFilter{
		{},
		{BankAccountID: a.ID},
		{AccountNumber: "222", BankAccountID: b.ID},
		{FromDate: "2026-03-03", ToDate: "2026-03-13"},
		{FromDate: "2026-03-02", BankAccountID: a.ID},
	} {
		want := expected(f)
		for _, limit := range []int{20, 100, 7} {
			for offset := 980; offset < len(want)+limit; offset += limit {
				f.Limit, f.Page = limit, offset/limit+1
				list, total, err := s.Transactions(t.Context(), c.Tenant(), f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, x := range list {
					got = append(got, x.ReferenceNumber)
				}
				from := (f.Page - 1) * limit
				w := want[min(from, len(want)):min(from+limit, len(want))]
				if total != int64(len(want)) || !slices.Equal(got, w) {
					t.Fatalf("filter %+v: total %d, page %v; want total %d, page %v", f, total, got, len(want), w)
				}
			}
		}
	}
}

func testTransactionsBalanceDiscontinuity(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	in := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 08:00:00", 100, 0),
		tx(a.ID, "R2", "2026-03-01 09:00:00", 50, 0),
		tx(a.ID, "R3", "2026-03-01 10:00:00", 10, 0),
		tx(a.ID, "R4", "2026-03-01 11:00:00", 0, 20),
	}
	in[0].Accumulated = ptr(1_000) // the first known balance sets the baseline
	in[1].Accumulated = ptr(1_050) // follows
	in[2].Accumulated = ptr(1_500) // a gap of 440: something was missed
	res, err := s.IngestTransactions(t.Context(), c.Tenant(), in, make([]string, 4))
	if err != nil {
		t.Fatal(err)
	}
	list := listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 4)
	if list[0].Accumulated != 1_480 { // R4 computed from the reported 1500
		t.Fatalf("R4 balance %d, want 1480", list[0].Accumulated)
	}
	ds, err := s.BalanceDiscontinuities(t.Context(), c.Tenant())
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d discontinuities, want 1", len(ds))
	}
	d := ds[0]
	if d.TransactionID != res[2].ID || d.Expected != 1_060 || d.Reported != 1_500 || d.BankAccountID != a.ID {
		t.Fatalf("discontinuity %+v", d)
	}
	if other, _ := s.BalanceDiscontinuities(t.Context(), newCompany(t, s, 2).Tenant()); len(other) != 0 {
		t.Fatalf("another company sees %d discontinuities", len(other))
	}
}

func testTransactionsRecode(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	in := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 08:00:00", 100, 0),
		tx(a.ID, "R2", "2026-03-05 08:00:00", 100, 0),
		tx(a.ID, "R3", "2026-03-06 08:00:00", 100, 0),
	}
	if _, err := s.IngestTransactions(t.Context(), c.Tenant(), in, []string{"OLD", "OLD", ""}); err != nil {
		t.Fatal(err)
	}
	n, err := s.RecodeTransactions(t.Context(), c.Tenant(), time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), func(memo string) string { return "NEW" + memo[len(memo)-2:] })
	if err != nil || n != 2 {
		t.Fatalf("RecodeTransactions = %d, %v; want 2", n, err)
	}
	list := listAll(t, s, c.Tenant(), recon.TransactionFilter{}, 3)
	if list[0].Code != "NEWR3" || list[1].Code != "NEWR2" || list[2].Code != "OLD" {
		t.Fatalf("codes %q %q %q", list[0].Code, list[1].Code, list[2].Code)
	}
	n, err = s.RecodeTransactions(t.Context(), c.Tenant(), time.Time{}, func(string) string { return "" })
	if err != nil || n != 3 {
		t.Fatalf("clearing: %d, %v", n, err)
	}
}

// testTransactionsVersionFollowsChanges checks TransactionsIfChanged, what
// the API's kept pages rely on: every writer of a listed field (a row
// added, a balance re-derived, a code, a duplicate's state, a row wiped
// or purged) moves the tenant's version, a write that changes nothing
// (a repeated push) does not, the page read with a version is the page
// Transactions reads, and AuthEpochAndVersion reads the same version (and
// AuthEpoch's epoch).
func testTransactionsVersionFollowsChanges(t *testing.T, s recon.Store) {
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive) // purges before 2026-05-16 at retentionNow
	a := newAccount(t, s, c.ID, "111")
	f := recon.TransactionFilter{Page: 1, Limit: 50}
	// read reads the page with a version and checks it against
	// Transactions, and that the version read again is "unchanged".
	read := func(tenant recon.TenantID) ([]*recon.Transaction, int64) {
		t.Helper()
		list, total, version, err := s.TransactionsIfChanged(t.Context(), tenant, f, -1) // no version: versions are ≥ 0
		if err != nil {
			t.Fatalf("TransactionsIfChanged: %v", err)
		}
		want, wantTotal, err := s.Transactions(t.Context(), tenant, f)
		if err != nil {
			t.Fatal(err)
		}
		diff(t, "the page read with its version", want, list)
		if total != wantTotal {
			t.Fatalf("total %d, Transactions' %d", total, wantTotal)
		}
		again, _, same, err := s.TransactionsIfChanged(t.Context(), tenant, f, version)
		if err != nil || again != nil || same != version {
			t.Fatalf("read again at %d: %d rows, version %d, %v; want none, unchanged", version, len(again), same, err)
		}
		epoch, err := s.AuthEpoch(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if e, v, err := s.AuthEpochAndVersion(t.Context(), tenant); err != nil || e != epoch || v != version {
			t.Fatalf("AuthEpochAndVersion: epoch %d, version %d, %v; want %d, %d", e, v, err, epoch, version)
		}
		return list, version
	}
	version := func(tenant recon.TenantID) int64 { _, v := read(tenant); return v }
	moved := func(what string, tenant recon.TenantID, before int64) int64 {
		t.Helper()
		after := version(tenant)
		if after <= before {
			t.Fatalf("%s: version %d after %d, want it moved", what, after, before)
		}
		return after
	}
	v := version(c.Tenant())
	rows := []recon.TransactionInput{tx(a.ID, "V1", "2026-06-01 08:00:00", 1000, 0), tx(a.ID, "V2", "2026-06-02 08:00:00", 500, 0)}
	ingest(t, s, c.Tenant(), rows)
	v = moved("a push", c.Tenant(), v)
	ingest(t, s, c.Tenant(), rows)
	if again := version(c.Tenant()); again != v {
		t.Fatalf("a repeated push: version %d, want %d kept (nothing changed)", again, v)
	}
	// A row dated before both re-derives their balances.
	ingest(t, s, c.Tenant(), []recon.TransactionInput{tx(a.ID, "V0", "2026-05-31 08:00:00", 7, 0)})
	v = moved("a late row", c.Tenant(), v)
	if list, _ := read(c.Tenant()); list[0].Accumulated != 1507 {
		t.Fatalf("newest balance %d, want 1507 re-derived", list[0].Accumulated)
	}
	if _, err := s.RecodeTransactions(t.Context(), c.Tenant(), time.Time{}, func(string) string { return "DH1" }); err != nil {
		t.Fatal(err)
	}
	v = moved("a recode", c.Tenant(), v)
	// A possible duplicate, then its state resolved.
	first := ingestDup(t, s, c.Tenant(), transfer(a.ID, "FT1-FEED", "2026-06-03 10:15:42", "Nguyen Van A chuyen tien", 2_500_000), "")
	second := ingestDup(t, s, c.Tenant(), transfer(a.ID, "FT1", "2026-06-03 10:15:42", "NGUYEN VAN A CHUYEN TIEN", 2_500_000), "")
	if mustTx(t, s, c.Tenant(), second.ID).DupOf != first.ID {
		t.Fatal("the second transfer is not a possible duplicate of the first")
	}
	v = moved("a possible duplicate", c.Tenant(), v)
	u := newUser(t, s, c.ID, "ke.toan@example.vn")
	if _, err := s.ResolveException(t.Context(), c.Tenant(), second.ID, recon.ResolveInput{Action: recon.ResolveDuplicate, Note: "copy"}, u, retentionNow()); err != nil {
		t.Fatal(err)
	}
	v = moved("a duplicate confirmed", c.Tenant(), v)
	// Retention purges rows before 2026-05-16.
	ingest(t, s, c.Tenant(), []recon.TransactionInput{tx(a.ID, "OLD", "2026-05-01 08:00:00", 1, 0)})
	v = moved("an old row", c.Tenant(), v)
	if _, err := storeAs[recon.RetentionStore](t, s).ApplyRetention(t.Context(), retentionNow()); err != nil {
		t.Fatal(err)
	}
	moved("retention", c.Tenant(), v)
	// The test tenant's wipe.
	test := testTenant(t, s, c.ID).ID
	ingest(t, s, test, []recon.TransactionInput{tx(newAccount(t, s, test.ID(), "222").ID, "T1", "2026-06-01 08:00:00", 1, 0)})
	vt := version(test)
	if _, err := s.WipeTestData(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	moved("a wipe", test, vt)
}
