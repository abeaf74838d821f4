package storetest

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"recon"
)

// testMoney checks that amounts never wrap: running balances stay within
// ±recon.MaxAmount or the batch is refused whole, and report sums are exact
// or refused, never wrapped and never an internal error.
func testMoney(t *testing.T, open Open) {
	run(t, "RunningBalanceOverflowRefused", withAccount(open), testMoneyRunningBalanceOverflowRefused)
	run(t, "RunningBalanceProperty", withAccount(open), testMoneyRunningBalanceProperty)
	run(t, "ReportSumsNeverWrap", withAccount(open), testMoneyReportSumsNeverWrap)
}

func testMoneyRunningBalanceOverflowRefused(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// Ten pushes of 1000 × MaxAmount used to wrap the balance.
	for p := 0; p < 10; p++ {
		in := make([]recon.TransactionInput, recon.MaxIngestBatch)
		for i := range in {
			in[i] = tx(a.ID, fmt.Sprintf("P%dR%d", p, i), "2026-03-01 10:00:00", recon.MaxAmount, 0)
		}
		_, err := s.IngestTransactions(t.Context(), c.ID, in, make([]string, len(in)))
		wantCode(t, err, recon.EINVALID, "")
		if msg := recon.ErrorMessage(err); !strings.Contains(msg, "transactions[1]: the running balance of bank account") {
			t.Fatalf("message %q does not name the row and the balance", msg)
		}
	}
	listAll(t, s, c.ID, recon.TransactionFilter{}, 0)
	// Up to the limit is fine, one more VND is not, in either direction.
	res, err := s.IngestTransactions(t.Context(), c.ID, []recon.TransactionInput{tx(a.ID, "TOP", "2026-03-01 10:00:00", recon.MaxAmount, 0)}, []string{""})
	if err != nil || len(res) != 1 {
		t.Fatalf("ingest up to the limit: %v", err)
	}
	_, err = s.IngestTransactions(t.Context(), c.ID, []recon.TransactionInput{tx(a.ID, "OVER", "2026-03-01 10:00:01", 1, 0)}, []string{""})
	wantCode(t, err, recon.EINVALID, "")
	low := []recon.TransactionInput{
		tx(a.ID, "DOWN1", "2026-03-01 10:00:02", 0, recon.MaxAmount),
		tx(a.ID, "DOWN2", "2026-03-01 10:00:03", 0, recon.MaxAmount),
		tx(a.ID, "DOWN3", "2026-03-01 10:00:04", 0, 1),
	}
	_, err = s.IngestTransactions(t.Context(), c.ID, low, make([]string, 3))
	wantCode(t, err, recon.EINVALID, "")
	if _, err := s.IngestTransactions(t.Context(), c.ID, low[:2], make([]string, 2)); err != nil {
		t.Fatalf("down to -MaxAmount: %v", err)
	}
	list := listAll(t, s, c.ID, recon.TransactionFilter{}, 3)
	if list[0].Accumulated != -recon.MaxAmount {
		t.Fatalf("balance %d, want %d", list[0].Accumulated, -int64(recon.MaxAmount))
	}
}

func testMoneyRunningBalanceProperty(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// A seeded random walk near the limits, checked against big.Int.
	rng := rand.New(rand.NewPCG(8, 2026))
	limit := big.NewInt(recon.MaxAmount)
	balance := new(big.Int)
	stored, ref := 0, 0
	near := func() int64 { return recon.MaxAmount - rng.Int64N(1000) }
	for round := 0; round < 60; round++ {
		n := 1 + rng.IntN(4)
		in := make([]recon.TransactionInput, n)
		want := new(big.Int).Set(balance)
		ok := true
		for i := range in {
			ref++
			var amt int64
			switch rng.IntN(3) {
			case 0:
				amt = near()
			case 1:
				amt = 1 + rng.Int64N(recon.MaxAmount)
			default:
				amt = 1 + rng.Int64N(1000)
			}
			if rng.IntN(2) == 0 {
				in[i] = tx(a.ID, fmt.Sprintf("Q%d", ref), "2026-03-01 10:00:00", amt, 0)
				want.Add(want, big.NewInt(amt))
			} else {
				in[i] = tx(a.ID, fmt.Sprintf("Q%d", ref), "2026-03-01 10:00:00", 0, amt)
				want.Sub(want, big.NewInt(amt))
			}
			if rng.IntN(8) == 0 { // a feed-reported balance resets the walk
				rep := near()
				if rng.IntN(2) == 0 {
					rep = -rep
				}
				in[i].Accumulated = ptr(rep)
				want.SetInt64(rep)
			}
			if want.CmpAbs(limit) > 0 {
				ok = false
			}
		}
		_, err := s.IngestTransactions(t.Context(), c.ID, in, make([]string, n))
		if ok != (err == nil) {
			t.Fatalf("round %d: balance %v → %v: error %v, want refused=%v", round, balance, want, err, !ok)
		}
		if !ok {
			wantCode(t, err, recon.EINVALID, "")
			continue
		}
		balance.Set(want)
		stored += n
		list, total, err := s.Transactions(t.Context(), c.ID, recon.TransactionFilter{Page: 1, Limit: 1})
		if err != nil || total != int64(stored) || list[0].Accumulated != balance.Int64() {
			t.Fatalf("round %d: %d stored (want %d), accumulated %d (want %v), err %v", round, total, stored, list[0].Accumulated, balance, err)
		}
	}
	if stored == 0 {
		t.Fatal("no batch was accepted: the walk tests nothing")
	}
}

func testMoneyReportSumsNeverWrap(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// pairs of (MaxAmount in, MaxAmount out): the balance stays in
	// range while the incoming total grows past int64.
	push := func(from, to int) {
		t.Helper()
		for start := from; start < to; start += recon.MaxIngestBatch / 2 {
			var in []recon.TransactionInput
			for i := start; i < min(start+recon.MaxIngestBatch/2, to); i++ {
				in = append(in, tx(a.ID, fmt.Sprintf("I%d", i), "2026-03-01 10:00:00", recon.MaxAmount, 0),
					tx(a.ID, fmt.Sprintf("O%d", i), "2026-03-01 10:00:00", 0, recon.MaxAmount))
			}
			if _, err := s.IngestTransactions(t.Context(), c.ID, in, make([]string, len(in))); err != nil {
				t.Fatalf("ingest: %v", err)
			}
		}
	}
	const fits = math.MaxInt64 / recon.MaxAmount // 9223 incoming transfers
	push(0, fits)
	rep, err := s.Reconciliation(t.Context(), c.ID, "2026-03-01", "2026-03-01")
	if err != nil {
		t.Fatalf("report of %d × MaxAmount: %v", fits, err)
	}
	if want := int64(fits) * recon.MaxAmount; rep.Amounts[recon.MatchNone] != want || rep.Counts[recon.MatchNone] != fits {
		t.Fatalf("unmatched %d transfers, %d VND; want %d, %d", rep.Counts[recon.MatchNone], rep.Amounts[recon.MatchNone], fits, want)
	}
	push(fits, fits+1)
	_, err = s.Reconciliation(t.Context(), c.ID, "2026-03-01", "2026-03-01")
	wantCode(t, err, recon.EINVALID, "the unmatched amounts from 2026-03-01 to 2026-03-01 add up to more than 9223372036854775807 VND, the largest total a report can show: report on a shorter period")
	// The dashboard's day sums stop at the largest int64 ("at least"),
	// and never fail the ingestion that keeps them.
	flows, err := s.DayFlows(t.Context(), c.ID, "2026-03-01", "2026-03-01")
	if err != nil || len(flows) != 1 || flows[0].In != math.MaxInt64 || flows[0].Out != math.MaxInt64 || flows[0].InCount != fits+1 {
		t.Fatalf("day flows past the int64 limit: %+v %v", flows, err)
	}
}

// sameDayBatch returns n rows of the account, references prefix0, prefix1...
func sameDayBatch(a int64, prefix string, n int) []recon.TransactionInput {
	in := make([]recon.TransactionInput, n)
	for i := range in {
		in[i] = tx(a, fmt.Sprintf("%s%d", prefix, i), "2026-03-01 10:00:00", 1000, 0)
	}
	return in
}

// testIngestAtomically checks that the batches of one IngestAtomically call
// commit together or not at all.
func testIngestAtomically(t *testing.T, open Open) {
	run(t, "AllOrNothing", withAccount(open), testIngestAtomicallyAllOrNothing)
}

func testIngestAtomicallyAllOrNothing(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	other := newAccount(t, s, newCompany(t, s, 2).ID, "222")
	stop := errors.New("the file ends badly")
	for _, tt := range []struct {
		name string
		last func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error
		want string
	}{
		{"fill fails after two batches", func(func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error { return stop }, ""},
		{"a batch overflows", func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
			_, err := ingest([]recon.TransactionInput{tx(a.ID, "BIG1", "2026-03-01 10:00:00", recon.MaxAmount, 0)}, []string{""})
			return err
		}, recon.EINVALID},
		{"a batch names another company's account", func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
			_, err := ingest(sameDayBatch(other.ID, "X", 3), make([]string, 3))
			return err
		}, recon.ENOTFOUND},
	} {
		err := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
			for b := 0; b < 2; b++ {
				in := sameDayBatch(a.ID, fmt.Sprintf("B%d-", b), recon.MaxIngestBatch)
				if res, err := ingest(in, make([]string, len(in))); err != nil || len(res) != len(in) {
					t.Fatalf("%s: batch %d: %v", tt.name, b, err)
				}
			}
			return tt.last(ingest)
		})
		if tt.want == "" && !errors.Is(err, stop) {
			t.Fatalf("%s: %v, want fill's error", tt.name, err)
		} else if tt.want != "" {
			wantCode(t, err, tt.want, "")
		}
		listAll(t, s, c.ID, recon.TransactionFilter{}, 0)
		if ds, err := s.BalanceDiscontinuities(t.Context(), c.ID); err != nil || len(ds) != 0 {
			t.Fatalf("%s: discontinuities %v %v", tt.name, ds, err)
		}
	}
	// The balance did not move either: the next batches start from zero.
	var last []recon.IngestResult
	err := s.IngestAtomically(t.Context(), c.ID, func(ingest func([]recon.TransactionInput, []string) ([]recon.IngestResult, error)) error {
		for b := 0; b < 3; b++ {
			in := sameDayBatch(a.ID, "OK", 1000) // the same references: batches 2 and 3 are duplicates of batch 1
			var err error
			if last, err = ingest(in, make([]string, len(in))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(last) != 1000 || !last[0].Duplicate {
		t.Fatalf("IngestAtomically: %v; last batch duplicates: %v", err, len(last) > 0 && last[0].Duplicate)
	}
	_, total, err := s.Transactions(t.Context(), c.ID, recon.TransactionFilter{Page: 1, Limit: 1})
	if err != nil || total != 1000 {
		t.Fatalf("%d stored, want 1000 (%v)", total, err)
	}
	list, _, _ := s.Transactions(t.Context(), c.ID, recon.TransactionFilter{Page: 1, Limit: 1})
	if list[0].Accumulated != 1000*1000 {
		t.Fatalf("balance %d, want %d", list[0].Accumulated, 1000*1000)
	}
}
