package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"recon"
)

// testBankOrder: running balances follow the bank's order (transaction_date,
// then the order the bank gave), whatever the order of arrival (docs/api.md,
// Balances).
func testBankOrder(t *testing.T, open Open) {
	run(t, "StatementAfterSandboxTransfer", withAccount(open), testBankOrderStatementAfterSandboxTransfer)
	run(t, "DiscontinuitiesRederived", withAccount(open), testBankOrderDiscontinuitiesRederived)
	run(t, "FirstBankBalanceSetsTheBaseline", withAccount(open), testBankOrderFirstBankBalanceSetsTheBaseline)
	run(t, "OpeningAfterRetention", open, testBankOrderOpeningAfterRetention)
	run(t, "SameDateKeepsBatchOrder", withAccount(open), testBankOrderSameDateKeepsBatchOrder)
	run(t, "AnyArrivalOrder", open, testBankOrderAnyArrivalOrder)
}

func testBankOrderStatementAfterSandboxTransfer(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	yesterday := tx(a.ID, "FT0", "2026-11-25 17:00:00", 500_000, 0)
	yesterday.Accumulated = ptr(92_000_000)
	ingestOne(t, s, c.ID, yesterday)
	// The sandbox transfer of the afternoon arrives first, without a balance...
	ingestOne(t, s, c.ID, tx(a.ID, "SIM1", "2026-11-26 15:01:00", 2_090_000, 0))
	// ...then the morning's statement, with the bank's balances.
	st := []recon.TransactionInput{
		tx(a.ID, "FT1", "2026-11-26 08:10:00", 1_000_000, 0),
		tx(a.ID, "FT2", "2026-11-26 09:30:00", 0, 357_000),
		tx(a.ID, "FT3", "2026-11-26 10:20:00", 3_000_000, 0),
	}
	st[0].Accumulated, st[1].Accumulated, st[2].Accumulated = ptr(93_000_000), ptr(92_643_000), ptr(95_643_000)
	if err := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		_, err := ingest(st, make([]string, len(st)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := balances(t, s, c.ID, a.ID)
	diff(t, "balances, newest first", []string{"SIM1 97733000", "FT3 95643000", "FT2 92643000", "FT1 93000000", "FT0 92000000"}, got)
	if ds := discontinuities(t, s, c.ID); len(ds) != 0 {
		t.Fatalf("discontinuities %v, want none", ds)
	}
	// The account's balance is the one after 15:01: the next row starts there.
	ingestOne(t, s, c.ID, tx(a.ID, "SIM2", "2026-11-26 16:00:00", 1_000, 0))
	if got := balances(t, s, c.ID, a.ID)[0]; got != "SIM2 97734000" {
		t.Fatalf("after the next transfer: %s, want SIM2 97734000", got)
	}
}

func testBankOrderDiscontinuitiesRederived(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	r := []recon.TransactionInput{
		tx(a.ID, "R1", "2026-03-01 08:00:00", 1_000, 0),
		tx(a.ID, "R2", "2026-03-01 12:00:00", 100, 0),
		tx(a.ID, "R3", "2026-03-01 14:00:00", 50, 0),
		tx(a.ID, "R4", "2026-03-01 16:00:00", 10, 0),
	}
	r[0].Accumulated, r[2].Accumulated = ptr(1_000), ptr(1_150)
	if _, err := s.IngestTransactions(t.Context(), c.ID, r, make([]string, len(r))); err != nil {
		t.Fatal(err)
	}
	diff(t, "balances", []string{"R4 1160", "R3 1150", "R2 1100", "R1 1000"}, balances(t, s, c.ID, a.ID))
	if ds := discontinuities(t, s, c.ID); len(ds) != 0 {
		t.Fatalf("discontinuities %v, want none", ds)
	}
	// A transfer of 10:00 arrives late: R2 moves, and the bank's 1150 at
	// R3 no longer follows from 1300: a discontinuity. R3 keeps the
	// bank's balance, so R4 does not move.
	ingestOne(t, s, c.ID, tx(a.ID, "X", "2026-03-01 10:00:00", 200, 0))
	diff(t, "balances", []string{"R4 1160", "R3 1150", "R2 1300", "X 1200", "R1 1000"}, balances(t, s, c.ID, a.ID))
	diff(t, "discontinuities", []string{"R3 expected 1350 reported 1150"}, discontinuities(t, s, c.ID))
	// The missed payment out of 11:00 arrives: the balances follow again,
	// and the discontinuity goes.
	ingestOne(t, s, c.ID, tx(a.ID, "Y", "2026-03-01 11:00:00", 0, 200))
	diff(t, "balances", []string{"R4 1160", "R3 1150", "R2 1100", "Y 1000", "X 1200", "R1 1000"}, balances(t, s, c.ID, a.ID))
	if ds := discontinuities(t, s, c.ID); len(ds) != 0 {
		t.Fatalf("discontinuities %v, want none", ds)
	}
	// A bank balance that disagrees, arriving late, is recorded too.
	z := tx(a.ID, "Z", "2026-03-01 13:00:00", 5, 0)
	z.Accumulated = ptr(2_000) // expected 1105
	ingestOne(t, s, c.ID, z)
	diff(t, "balances", []string{"R4 1160", "R3 1150", "Z 2000", "R2 1100", "Y 1000", "X 1200", "R1 1000"}, balances(t, s, c.ID, a.ID))
	diff(t, "discontinuities", []string{"R3 expected 2050 reported 1150", "Z expected 1105 reported 2000"}, discontinuities(t, s, c.ID))
	// The account's balance did not move: the next row starts at 1160.
	ingestOne(t, s, c.ID, tx(a.ID, "N", "2026-03-02 08:00:00", 1, 0))
	if got := balances(t, s, c.ID, a.ID)[0]; got != "N 1161" {
		t.Fatalf("after the next transfer: %s, want N 1161", got)
	}
}

func testBankOrderFirstBankBalanceSetsTheBaseline(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// Sandbox transfers start from 0, an unknown balance: the bank's
	// first balance after them sets the baseline, no discontinuity.
	ingestOne(t, s, c.ID, tx(a.ID, "S1", "2026-03-01 10:00:00", 100, 0))
	b := tx(a.ID, "B", "2026-03-01 12:00:00", 10, 0)
	b.Accumulated = ptr(5_000)
	ingestOne(t, s, c.ID, b)
	ingestOne(t, s, c.ID, tx(a.ID, "S2", "2026-03-01 13:00:00", 1, 0))
	diff(t, "balances", []string{"S2 5001", "B 5000", "S1 100"}, balances(t, s, c.ID, a.ID))
	if ds := discontinuities(t, s, c.ID); len(ds) != 0 {
		t.Fatalf("discontinuities %v, want none", ds)
	}
	// The bank's balance of the morning arrives: S1's balance is known
	// now, and B's does not follow from it.
	f := tx(a.ID, "F", "2026-03-01 08:00:00", 1_000, 0)
	f.Accumulated = ptr(1_000)
	ingestOne(t, s, c.ID, f)
	diff(t, "balances", []string{"S2 5001", "B 5000", "S1 1100", "F 1000"}, balances(t, s, c.ID, a.ID))
	diff(t, "discontinuities", []string{"B expected 1110 reported 5000"}, discontinuities(t, s, c.ID))
}

func testBankOrderOpeningAfterRetention(t *testing.T, s recon.Store) {
	c := retainedCompany(t, s, 1, 30, recon.CompanyActive) // on 2026-06-15: kept from 2026-05-16
	a := newAccount(t, s, c.ID, "111")
	rows := []recon.TransactionInput{
		tx(a.ID, "O1", "2026-05-01 09:00:00", 1_000, 0),
		tx(a.ID, "O2", "2026-05-10 09:00:00", 4_000, 0),
		tx(a.ID, "K1", "2026-06-10 09:00:00", 100, 0),
	}
	rows[1].Accumulated = ptr(5_000)
	if _, err := s.IngestTransactions(t.Context(), c.ID, rows, make([]string, len(rows))); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 6, 15, 3, 0, 0, 0, time.FixedZone("ICT", 7*3600))
	if _, err := storeAs[recon.RetentionStore](t, s).ApplyRetention(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	diff(t, "balances after retention", []string{"K1 5100"}, balances(t, s, c.ID, a.ID))
	// A row dated before every kept row starts from the balance before
	// them, which retention kept: not from 0.
	ingestOne(t, s, c.ID, tx(a.ID, "N1", "2026-06-01 09:00:00", 10, 0))
	diff(t, "balances", []string{"K1 5110", "N1 5010"}, balances(t, s, c.ID, a.ID))
	// That balance is known: a bank's balance that disagrees with it is a discontinuity.
	n0 := tx(a.ID, "N0", "2026-05-20 09:00:00", 10, 0)
	n0.Accumulated = ptr(7_000)
	ingestOne(t, s, c.ID, n0)
	diff(t, "balances", []string{"K1 7110", "N1 7010", "N0 7000"}, balances(t, s, c.ID, a.ID))
	diff(t, "discontinuities", []string{"N0 expected 5010 reported 7000"}, discontinuities(t, s, c.ID))
}

func testBankOrderSameDateKeepsBatchOrder(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	ingestOne(t, s, c.ID, tx(a.ID, "LATE", "2026-03-02 09:00:00", 1, 0))
	// A statement with dates only: the bank's order within the day is
	// the file's, and its balances follow in that order.
	st := []recon.TransactionInput{
		tx(a.ID, "D1", "2026-03-01 00:00:00", 100, 0),
		tx(a.ID, "D2", "2026-03-01 00:00:00", 0, 30),
		tx(a.ID, "D3", "2026-03-01 00:00:00", 5, 0),
	}
	st[0].Accumulated, st[1].Accumulated, st[2].Accumulated = ptr(100), ptr(70), ptr(75)
	if _, err := s.IngestTransactions(t.Context(), c.ID, st, make([]string, len(st))); err != nil {
		t.Fatal(err)
	}
	diff(t, "balances", []string{"LATE 76", "D3 75", "D2 70", "D1 100"}, balances(t, s, c.ID, a.ID))
	if ds := discontinuities(t, s, c.ID); len(ds) != 0 {
		t.Fatalf("discontinuities %v, want none", ds)
	}
}

func testBankOrderAnyArrivalOrder(t *testing.T, s recon.Store) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	for iter := range 12 {
		// A day of two accounts.
		days := [2][]dayRow{randomDay(rnd, "A"), randomDay(rnd, "B")}
		// Sorted, each account in one batch: what the store must agree
		// with, and agrees with the rule written out.
		c := newCompany(t, s, 2*iter+1)
		var accounts [2]int64
		var want, ref []string
		for k, day := range days {
			accounts[k] = newAccount(t, s, c.ID, fmt.Sprint(111*(k+1))).ID
			sorted := onAccount(day, accounts[k])
			if _, err := s.IngestTransactions(t.Context(), c.ID, sorted, make([]string, len(sorted))); err != nil {
				t.Fatal(err)
			}
			want = append(want, modelBalances(day)...)
		}
		ref = outcome(t, s, c.ID, accounts)
		diff(t, fmt.Sprintf("iteration %d: sorted order against the model", iter), sortedGaps(want), ref)

		// Any permutation of both, in random batches mixing the
		// accounts, some through IngestAtomically, some resent.
		c = newCompany(t, s, 2*iter+2)
		var perm []recon.TransactionInput
		for k, day := range days {
			accounts[k] = newAccount(t, s, c.ID, fmt.Sprint(111*(k+1))).ID
			perm = append(perm, onAccount(day, accounts[k])...)
		}
		rnd.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		var sent []recon.TransactionInput
		for len(perm) > 0 {
			n := 1 + rnd.IntN(min(len(perm), 6))
			batch := slices.Clone(perm[:n])
			perm = perm[n:]
			if len(sent) > 0 && rnd.IntN(4) == 0 {
				batch = append(batch, sent[rnd.IntN(len(sent))]) // a duplicate: moves nothing
			}
			sent = append(sent, batch...)
			if rnd.IntN(2) == 0 {
				if _, err := s.IngestTransactions(t.Context(), c.ID, batch, make([]string, len(batch))); err != nil {
					t.Fatal(err)
				}
				continue
			}
			half := len(batch) / 2
			if err := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
				for _, b := range [][]recon.TransactionInput{batch[:half], batch[half:]} {
					if _, err := ingest(b, make([]string, len(b))); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		diff(t, fmt.Sprintf("iteration %d (seed %d): a permutation against the sorted order", iter, seed), ref, outcome(t, s, c.ID, accounts))
	}
}

func ingestOne(t *testing.T, s recon.Store, companyID int64, in recon.TransactionInput) {
	t.Helper()
	if _, err := s.IngestTransactions(t.Context(), companyID, []recon.TransactionInput{in}, []string{""}); err != nil {
		t.Fatalf("IngestTransactions %s: %v", in.ReferenceNumber, err)
	}
}

// balances lists the account's rows newest first as "reference balance".
func balances(t *testing.T, s recon.Store, companyID, account int64) []string {
	t.Helper()
	list, _, err := s.Transactions(t.Context(), companyID, recon.TransactionFilter{BankAccountID: account, Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		out = append(out, fmt.Sprintf("%s %d", x.ReferenceNumber, x.Accumulated))
	}
	return out
}

// discontinuities lists the company's as "reference expected reported", by reference.
func discontinuities(t *testing.T, s recon.Store, companyID int64) []string {
	t.Helper()
	ds, err := s.BalanceDiscontinuities(t.Context(), companyID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds {
		x, err := s.Transaction(t.Context(), companyID, d.TransactionID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s expected %d reported %d", x.ReferenceNumber, d.Expected, d.Reported))
	}
	slices.Sort(out)
	return out
}

// dayRow is a row of a random day: its minute, amount and bank balance.
type dayRow struct {
	ref    string
	minute int
	delta  int64
	bank   *int64
}

// randomDay returns 2 to 24 rows at distinct minutes of a day, in order,
// about half with the bank's balance, most of which follow.
func randomDay(rnd *rand.Rand, prefix string) []dayRow {
	minutes := rnd.Perm(24 * 60)[:2+rnd.IntN(23)]
	slices.Sort(minutes)
	bal := int64(rnd.IntN(1_000_000))
	var day []dayRow
	for i, m := range minutes {
		r := dayRow{ref: fmt.Sprintf("%s%02d", prefix, i), minute: m, delta: int64(1 + rnd.IntN(100_000))}
		if rnd.IntN(3) == 0 {
			r.delta = -r.delta
		}
		bal += r.delta
		if rnd.IntN(2) == 0 {
			b := bal
			if rnd.IntN(4) == 0 {
				b += int64(1 + rnd.IntN(1_000)) // a gap: missed transactions
			}
			bal = b
			r.bank = &b
		}
		day = append(day, r)
	}
	return day
}

// onAccount makes the day's rows transactions of the account, in order.
func onAccount(day []dayRow, account int64) []recon.TransactionInput {
	var out []recon.TransactionInput
	for _, r := range day {
		x := tx(account, r.ref, fmt.Sprintf("2026-03-01 %02d:%02d:00", r.minute/60, r.minute%60), max(r.delta, 0), max(-r.delta, 0))
		x.Accumulated = r.bank
		out = append(out, x)
	}
	return out
}

// modelBalances is what the account of the sorted day must hold, newest
// first, then its discontinuities and the next row's balance (a probe of 1
// the next day): the rule of docs/api.md, Balances, written out.
func modelBalances(day []dayRow) []string {
	var rows, gaps []string
	var bal int64
	known := false // whether bal follows from a bank's balance
	for _, r := range day {
		expected := bal + r.delta
		bal = expected
		if r.bank != nil {
			if known && *r.bank != expected {
				gaps = append(gaps, fmt.Sprintf("%s expected %d reported %d", r.ref, expected, *r.bank))
			}
			bal, known = *r.bank, true
		}
		rows = append(rows, fmt.Sprintf("%s %d", r.ref, bal))
	}
	slices.Reverse(rows)
	return append(append(rows, gaps...), fmt.Sprintf("next %d", bal+1))
}

// sortedGaps orders the discontinuity lines ("... expected ...") of an
// outcome after the rest, as outcome lists them.
func sortedGaps(lines []string) []string {
	var rows, gaps []string
	for _, l := range lines {
		if strings.Contains(l, " expected ") {
			gaps = append(gaps, l)
		} else {
			rows = append(rows, l)
		}
	}
	slices.Sort(gaps)
	return append(rows, gaps...)
}

// outcome is each account's balances newest first and the balance its next
// row gets (a probe of 1 the next day, which it stores), then the company's
// discontinuities.
func outcome(t *testing.T, s recon.Store, companyID int64, accounts [2]int64) []string {
	t.Helper()
	var out []string
	for _, a := range accounts {
		out = append(out, balances(t, s, companyID, a)...)
		ingestOne(t, s, companyID, tx(a, fmt.Sprintf("PROBE%d", a), "2026-03-02 00:00:00", 1, 0))
		out = append(out, "next "+strings.Fields(balances(t, s, companyID, a)[0])[1])
	}
	return append(out, discontinuities(t, s, companyID)...)
}
