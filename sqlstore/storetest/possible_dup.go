package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"recon"
)

// Possible duplicates (docs/statements.md, Possible duplicates).
func testPossibleDuplicates(t *testing.T, open Open) {
	run(t, "FeedThenStatement", withAccount(open), testDupFeedThenStatement)
	run(t, "ByReference", withAccount(open), testDupByReference)
	run(t, "Window", withAccount(open), testDupWindow)
	run(t, "InOneBatch", withAccount(open), testDupInOneBatch)
	run(t, "DistinctPays", withAccount(open), testDupDistinctPays)
	run(t, "DistinctReopens", withAccount(open), testDupDistinctReopens)
	run(t, "Interleavings", open, testDupInterleavings)
}

// transfer is one incoming transfer as a source writes it.
func transfer(account int64, ref, date, memo string, amount int64, refs ...string) recon.TransactionInput {
	in := tx(account, ref, date, amount, 0)
	in.Content, in.References = memo, refs
	return in
}

func ingestDup(t *testing.T, s recon.Store, tenant recon.TenantID, in recon.TransactionInput, code string) recon.IngestResult {
	t.Helper()
	res, err := s.IngestTransactions(t.Context(), tenant, []recon.TransactionInput{in}, []string{code})
	if err != nil {
		t.Fatalf("IngestTransactions: %v", err)
	}
	return res[0]
}

func dayFlow(t *testing.T, s recon.Store, tenant recon.TenantID, day string) recon.DayFlow {
	t.Helper()
	got, err := s.DayFlows(t.Context(), tenant, day, day)
	if err != nil {
		t.Fatal(err)
	}
	var f recon.DayFlow
	for _, d := range got {
		if d.Day == day {
			f = d
		}
	}
	return f
}

// lastBalance is the account's balance after its latest row.
func lastBalance(t *testing.T, s recon.Store, tenant recon.TenantID, account int64) int64 {
	t.Helper()
	list, _, err := s.Transactions(t.Context(), tenant, recon.TransactionFilter{BankAccountID: account, Page: 1, Limit: 1})
	if err != nil || len(list) == 0 {
		t.Fatalf("Transactions: %v %d", err, len(list))
	}
	return list[0].Accumulated
}

func mustTx(t *testing.T, s recon.Store, tenant recon.TenantID, id int64) *recon.Transaction {
	t.Helper()
	got, err := s.Transaction(t.Context(), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The example: a feed's transfer, then the day's camt.053 entry of
// it under the bank's own reference.
func testDupFeedThenStatement(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	first := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT26260987654321-FEED", "2026-03-02 10:15:42", "Nguyễn Văn A chuyển tiền  hoá đơn 42", 2_500_000), "")
	second := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT26260987654321", "2026-03-02 10:15:42", "NGUYEN VAN A CHUYEN TIEN HOA DON 42", 2_500_000, "E2E-42"), "")
	if first.Exception || !second.Exception || second.Duplicate {
		t.Fatalf("results %+v %+v: want the second a new row opening an exception", first, second)
	}
	got := mustTx(t, b.s, tenant, second.ID)
	if got.DupState != recon.DupPossible || got.DupOf != first.ID {
		t.Fatalf("state %q of %d, want possible of %d", got.DupState, got.DupOf, first.ID)
	}
	if st := mustTx(t, b.s, tenant, first.ID).DupState; st != "" {
		t.Fatalf("first row's state %q", st)
	}
	if f := dayFlow(t, b.s, tenant, "2026-03-02"); f.In != 2_500_000 || f.InCount != 1 {
		t.Fatalf("flows %+v: counted twice", f)
	}
	if bal := lastBalance(t, b.s, tenant, b.a.ID); bal != 2_500_000 {
		t.Fatalf("balance %d", bal)
	}
	e, err := b.s.Exception(t.Context(), tenant, second.ID)
	if err != nil || e.Kind != recon.ExceptionPossibleDuplicate || !strings.Contains(e.Reason, fmt.Sprint(first.ID)) {
		t.Fatalf("exception %+v %v", e, err)
	}
	// Repeated: nothing changes.
	again := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT26260987654321", "2026-03-02 10:15:42", "NGUYEN VAN A CHUYEN TIEN HOA DON 42", 2_500_000, "E2E-42"), "")
	if !again.Duplicate || again.ID != second.ID {
		t.Fatalf("repeat %+v", again)
	}
	u := newUser(t, b.s, b.c.ID, "ke.toan@example.vn")
	now := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC)
	if _, err := b.s.ResolveException(t.Context(), tenant, second.ID, recon.ResolveInput{Action: recon.ResolveIgnore, Note: "x"}, u, now); recon.ErrorCode(err) != recon.ECONFLICT {
		t.Fatalf("ignore: %v, want ECONFLICT", err)
	}
	res, err := b.s.ResolveException(t.Context(), tenant, second.ID, recon.ResolveInput{Action: recon.ResolveDuplicate, Note: "the statement's copy"}, u, now)
	if err != nil || !res.Closes || res.PreviousKind != recon.ExceptionPossibleDuplicate {
		t.Fatalf("resolve: %+v %v", res, err)
	}
	if st := mustTx(t, b.s, tenant, second.ID).DupState; st != recon.DupConfirmed {
		t.Fatalf("state %q", st)
	}
	if f := dayFlow(t, b.s, tenant, "2026-03-02"); f.In != 2_500_000 || f.InCount != 1 {
		t.Fatalf("flows after duplicate %+v", f)
	}
	if _, err := b.s.ResolveException(t.Context(), tenant, second.ID, recon.ResolveInput{Action: recon.ResolveDistinct, Note: "x"}, u, now); recon.ErrorCode(err) != recon.ECONFLICT {
		t.Fatalf("second resolution: %v, want ECONFLICT", err)
	}
	// Other transfers of the day are not compared with it: other memo or amount.
	if r := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT9", "2026-03-02 11:00:00", "NGUYEN VAN A CHUYEN TIEN HOA DON 43", 2_500_000), ""); r.Exception {
		t.Fatal("another memo is a possible duplicate")
	}
	if r := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT10", "2026-03-02 11:00:00", "NGUYEN VAN A CHUYEN TIEN HOA DON 42", 2_500_001), ""); r.Exception {
		t.Fatal("another amount is a possible duplicate")
	}
}

// A statement's entry sharing a reference key with the feed's row is a
// possible duplicate even when the memos differ.
func testDupByReference(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	first := ingestDup(t, b.s, tenant, transfer(b.a.ID, "FT26260987654321-FEED", "2026-03-02 10:15:42", "CK 42", 700_000), "")
	second := ingestDup(t, b.s, tenant, transfer(b.a.ID, "ACSR-1", "2026-03-02 10:15:42", "Thanh toan don 42 qua NAPAS", 700_000, "VCB/FT26260987654321"), "")
	got := mustTx(t, b.s, tenant, second.ID)
	if got.DupState != recon.DupPossible || got.DupOf != first.ID {
		t.Fatalf("state %q of %d", got.DupState, got.DupOf)
	}
	// Without a shared key, it is a transfer of its own.
	third := ingestDup(t, b.s, tenant, transfer(b.a.ID, "ACSR-2", "2026-03-02 10:20:00", "Thanh toan don 43", 700_000, "NOTPROVIDED"), "")
	if st := mustTx(t, b.s, tenant, third.ID).DupState; st != "" {
		t.Fatalf("state %q", st)
	}
}

// The window: the same day by default, a company setting of 0 to 7 days.
func testDupWindow(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	ingestDup(t, b.s, tenant, transfer(b.a.ID, "A1", "2026-03-02 23:59:00", "tien nha", 1_000_000), "")
	if r := ingestDup(t, b.s, tenant, transfer(b.a.ID, "A2", "2026-03-03 00:01:00", "tien nha", 1_000_000), ""); r.Exception {
		t.Fatal("the next day is a possible duplicate with a window of 0")
	}
	if _, err := b.s.UpdateCompany(t.Context(), b.c.ID, func(c *recon.Company) error { c.Config.DuplicateWindowDays = 8; return nil }); recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(recon.ErrorMessage(err), "duplicate_window_days") {
		t.Fatalf("window 8: %v", err)
	}
	if _, err := b.s.UpdateCompany(t.Context(), b.c.ID, func(c *recon.Company) error { c.Config.DuplicateWindowDays = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := b.s.Company(t.Context(), b.c.ID); err != nil || c.Config.DuplicateWindowDays != 2 {
		t.Fatalf("window %v %v", c, err)
	}
	if r := ingestDup(t, b.s, tenant, transfer(b.a.ID, "A3", "2026-03-05 08:00:00", "TIỀN NHÀ", 1_000_000), ""); !r.Exception {
		t.Fatal("two days later is not a possible duplicate with a window of 2")
	}
	if r := ingestDup(t, b.s, tenant, transfer(b.a.ID, "A4", "2026-03-09 08:00:00", "tien nha", 1_000_000), ""); r.Exception {
		t.Fatal("four days later is a possible duplicate with a window of 2")
	}
}

// Resolved distinct, a possible duplicate enters the balances in date
// order, the day's sums, and matching: it pays the order its memo names.
func testDupDistinctPays(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	first := ingestDup(t, b.s, tenant, transfer(b.a.ID, "P1", "2026-03-02 10:00:00", "chuyen tien DH777", 300_000), "DH777")
	second := ingestDup(t, b.s, tenant, transfer(b.a.ID, "P2", "2026-03-02 10:05:00", "CHUYEN TIEN DH777", 300_000), "DH777")
	later := ingestDup(t, b.s, tenant, transfer(b.a.ID, "P3", "2026-03-02 12:00:00", "khac", 50_000), "")
	if mustTx(t, b.s, tenant, second.ID).DupState != recon.DupPossible {
		t.Fatal("not a possible duplicate")
	}
	if bal := mustTx(t, b.s, tenant, later.ID).Accumulated; bal != 350_000 {
		t.Fatalf("balance %d before the resolution", bal)
	}
	o := newOrder(t, b.s, b.c.ID, b.a.ID, "SECOND", "DH777", 300_000) // the order the payer paid twice for, made afterwards
	u := newUser(t, b.s, b.c.ID, "ke.toan@example.vn")
	res, err := b.s.ResolveException(t.Context(), tenant, second.ID, recon.ResolveInput{Action: recon.ResolveDistinct, Note: "two payments"}, u, time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC))
	if err != nil || !res.Closes {
		t.Fatalf("resolve: %+v %v", res, err)
	}
	got := mustTx(t, b.s, tenant, second.ID)
	if got.DupState != recon.DupDistinct || got.Accumulated != 600_000 {
		t.Fatalf("state %q balance %d", got.DupState, got.Accumulated)
	}
	if bal := mustTx(t, b.s, tenant, later.ID).Accumulated; bal != 650_000 {
		t.Fatalf("later balance %d", bal)
	}
	if bal := lastBalance(t, b.s, tenant, b.a.ID); bal != 650_000 {
		t.Fatalf("balance %d", bal)
	}
	if f := dayFlow(t, b.s, tenant, "2026-03-02"); f.In != 650_000 || f.InCount != 3 || f.Matched != 300_000 {
		t.Fatalf("flows %+v", f)
	}
	paid, err := b.s.Order(t.Context(), tenant, o.InvoiceNumber)
	if err != nil || paid.Status != recon.OrderCaptured || paid.PaidTransactionID != second.ID {
		t.Fatalf("order %+v %v", paid, err)
	}
	if e, err := b.s.Exception(t.Context(), tenant, second.ID); err != nil || e.Resolution == nil || e.Resolution.Action != recon.ResolveDistinct {
		t.Fatalf("exception %+v %v", e, err)
	}
	_ = first
}

// Resolved distinct, a transfer that matching leaves an exception of
// another kind keeps an open exception of that kind.
func testDupDistinctReopens(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	newOrder(t, b.s, b.c.ID, b.a.ID, "ONE", "DH555", 300_000)
	ingestDup(t, b.s, tenant, transfer(b.a.ID, "P1", "2026-03-02 10:00:00", "DH555", 300_000), "DH555")
	second := ingestDup(t, b.s, tenant, transfer(b.a.ID, "P2", "2026-03-02 10:05:00", "dh555", 300_000), "DH555")
	u := newUser(t, b.s, b.c.ID, "ke.toan@example.vn")
	res, err := b.s.ResolveException(t.Context(), tenant, second.ID, recon.ResolveInput{Action: recon.ResolveDistinct, Note: "paid twice"}, u, time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC))
	if err != nil || res.Closes {
		t.Fatalf("resolve: %+v %v", res, err)
	}
	e, err := b.s.Exception(t.Context(), tenant, second.ID)
	if err != nil || e.Kind != recon.ExceptionDuplicate || e.Resolution != nil || len(e.Decisions) != 1 {
		t.Fatalf("exception %+v %v", e, err)
	}
	if f := dayFlow(t, b.s, tenant, "2026-03-02"); f.In != 600_000 || f.InCount != 2 {
		t.Fatalf("flows %+v", f)
	}
}

// Any interleaving of a day's feed and statement, references rewritten as
// banks do and the statement's memos normalised, counts each transfer once,
// with the bank's balances agreeing; importing again changes nothing.
func testDupInterleavings(t *testing.T, s recon.Store) {
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		c := newCompany(t, s, 100+n)
		a := newAccount(t, s, c.ID, fmt.Sprint(1000+n))
		tenant := c.Tenant()
		k := rapid.IntRange(1, 8).Draw(rt, "transfers")
		var feed, stmt []recon.TransactionInput
		var total int64
		for i := range k {
			amount := rapid.SampledFrom([]int64{100_000, 250_000, 2_500_000}).Draw(rt, "amount")
			total += amount
			date := fmt.Sprintf("2026-03-02 %02d:%02d:%02d", 8+i, rapid.IntRange(0, 59).Draw(rt, "minute"), rapid.IntRange(0, 59).Draw(rt, "second"))
			core := fmt.Sprintf("FT2626%010d", n*100+i)
			memo := fmt.Sprintf("Trần Thị Bích chuyển khoản đơn %d", i)
			feedRef := rapid.SampledFrom([]string{core + "-FEED", core, "VCB." + core}).Draw(rt, "feed reference")
			stmtRef := rapid.SampledFrom([]string{core, "ACSR" + core[6:], "VCB/" + core}).Draw(rt, "statement reference")
			if feedRef == stmtRef {
				stmtRef += "/1"
			}
			feed = append(feed, transfer(a.ID, feedRef, date, memo, amount))
			e := transfer(a.ID, stmtRef, date, strings.ToUpper(recon.NormalizeMemo(memo)), amount, "E2E"+core)
			e.Accumulated = ptr(total)
			stmt = append(stmt, e)
		}
		// Each source in a few batches, the batches interleaved.
		batches := func(src []recon.TransactionInput, label string) [][]recon.TransactionInput {
			var out [][]recon.TransactionInput
			for len(src) > 0 {
				m := rapid.IntRange(1, len(src)).Draw(rt, label)
				out = append(out, src[:m])
				src = src[m:]
			}
			return out
		}
		fb, sb := batches(feed, "feed batch"), batches(stmt, "statement batch")
		ingest := func(batch []recon.TransactionInput) {
			if _, err := s.IngestTransactions(t.Context(), tenant, batch, make([]string, len(batch))); err != nil {
				rt.Fatalf("IngestTransactions: %v", err)
			}
		}
		for len(fb)+len(sb) > 0 {
			if len(sb) == 0 || (len(fb) > 0 && rapid.Bool().Draw(rt, "feed first")) {
				ingest(fb[0])
				fb = fb[1:]
			} else {
				ingest(sb[0])
				sb = sb[1:]
			}
		}
		check := func(when string) {
			f := dayFlow(t, s, tenant, "2026-03-02")
			if f.In != total || f.InCount != int64(k) {
				rt.Fatalf("%s: flows %+v, want %d transfers of %d", when, f, k, total)
			}
			if bal := lastBalance(t, s, tenant, a.ID); bal != total {
				rt.Fatalf("%s: balance %d, want %d", when, bal, total)
			}
			ds, err := s.BalanceDiscontinuities(t.Context(), tenant)
			if err != nil || len(ds) != 0 {
				rt.Fatalf("%s: discontinuities %d %v", when, len(ds), err)
			}
			list, rows, err := s.Transactions(t.Context(), tenant, recon.TransactionFilter{Page: 1, Limit: 50})
			if err != nil || rows != int64(2*k) {
				rt.Fatalf("%s: %d rows %v, want %d", when, rows, err, 2*k)
			}
			possible := 0
			for _, x := range list {
				if x.DupState == recon.DupPossible {
					possible++
				}
			}
			if possible != k {
				rt.Fatalf("%s: %d possible duplicates, want %d", when, possible, k)
			}
		}
		check("interleaved")
		ingest(stmt) // the statement imported again
		ingest(feed)
		check("repeated")
	})
}

// Within one batch, a row like an earlier row of the batch is a possible
// duplicate of it, and a third names the same first row.
func testDupInOneBatch(t *testing.T, b *accountBundle) {
	tenant := b.c.Tenant()
	in := []recon.TransactionInput{
		transfer(b.a.ID, "S1", "2026-03-02 09:00:00", "Lê Văn C ck", 80_000),
		transfer(b.a.ID, "S2", "2026-03-02 09:00:00", "LE VAN C CK", 80_000),
		transfer(b.a.ID, "S3", "2026-03-02 17:00:00", "le van c  ck", 80_000),
		transfer(b.a.ID, "S4", "2026-03-02 17:00:00", "le van c ck", 80_001),
	}
	res, err := b.s.IngestTransactions(t.Context(), tenant, in, make([]string, len(in)))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{0, res[0].ID, res[0].ID, 0} {
		got := mustTx(t, b.s, tenant, res[i].ID)
		if got.DupOf != want || (want != 0) != (got.DupState == recon.DupPossible) {
			t.Errorf("row %d: %q of %d, want of %d", i, got.DupState, got.DupOf, want)
		}
	}
	if f := dayFlow(t, b.s, tenant, "2026-03-02"); f.In != 160_001 || f.InCount != 2 {
		t.Fatalf("flows %+v", f)
	}
}
