package storetest

import (
	"fmt"
	"testing"
	"time"

	"recon"
)

// testSearch checks the dashboard's search of transactions (code, matched
// state, memo; SearchTransactions): what each filter keeps, with the §4.3
// filters, keyset pages, the exact totals from the day counts, the bounded
// window, and that another company's and the other mode's rows never show.
func testSearch(t *testing.T, open Open) {
	run(t, "Filters", withAccount(open), testSearchFilters)
	run(t, "Window", withAccount(open), testSearchWindow)
}

func testSearchFilters(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	a2 := newAccount(t, s, c.ID, "222")
	newOrder(t, s, c.ID, a.ID, "A", "DH70001", 100_000)
	newOrder(t, s, c.ID, a.ID, "B", "DH70002", 50_000)
	memo := func(in recon.TransactionInput, content string) recon.TransactionInput {
		in.Content = content
		return in
	}
	rows := []recon.TransactionInput{
		memo(tx(a.ID, "R1", "2026-03-01 10:00:00", 100_000, 0), "Nguyễn Văn An chuyển tiền DH70001"), // A paid
		tx(a.ID, "R2", "2026-03-01 11:00:00", 20_000, 0),                                             // B underpaid: paid an order, exception
		memo(tx(a.ID, "R3", "2026-03-01 12:00:00", 7_000, 0), "Tiền điện <b>tháng 3</b>"),            // no code: unmatched, exception
		tx(a.ID, "R4", "2026-03-01 23:59:59", 0, 3_000),                                              // out: neither
		memo(tx(a2.ID, "R6", "2026-03-02 09:00:00", 8_000, 0), "NGUYEN VAN AN DH99999"),              // no such order: unmatched, exception
		tx(a.ID, "R5", "2026-03-03 00:00:00", 5_000, 0),                                              // A again: duplicate, exception
	}
	if _, err := s.IngestTransactions(t.Context(), c.ID, rows, []string{"DH70001", "DH70002", "", "", "DH99999", "DH70001"}); err != nil {
		t.Fatal(err)
	}
	// The same code and memo in another company and in the test mode.
	other := newCompany(t, s, 2)
	oa := newAccount(t, s, other.ID, "111")
	tt := testTenant(t, s, c.ID)
	ta := newAccount(t, s, tt.ID, "111")
	for _, x := range []struct{ company, account int64 }{{other.ID, oa.ID}, {tt.ID, ta.ID}} {
		in := []recon.TransactionInput{memo(tx(x.account, "X1", "2026-03-02 08:00:00", 1_000, 0), "Nguyễn Văn An DH70001")}
		if _, err := s.IngestTransactions(t.Context(), x.company, in, []string{"DH70001"}); err != nil {
			t.Fatal(err)
		}
	}
	search := func(companyID int64, q recon.TransactionSearch) *recon.TransactionSearchPage {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 20
		}
		p, err := s.SearchTransactions(t.Context(), companyID, q)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	refs := func(p *recon.TransactionSearchPage) []string {
		out := []string{}
		for _, r := range p.Rows {
			out = append(out, r.ReferenceNumber)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		q       recon.TransactionSearch
		want    []string
		counted bool
		total   int64
	}{
		{"code", recon.TransactionSearch{Code: "DH70001"}, []string{"R5", "R1"}, false, 0},
		{"matched", recon.TransactionSearch{Matched: recon.StateMatched}, []string{"R2", "R1"}, true, 2},
		{"unmatched", recon.TransactionSearch{Matched: recon.StateUnmatched}, []string{"R5", "R6", "R3"}, true, 3},
		{"unmatched on the 1st", recon.TransactionSearch{Matched: recon.StateUnmatched, TransactionFilter: recon.TransactionFilter{FromDate: "2026-03-01", ToDate: "2026-03-01"}}, []string{"R3"}, true, 1},
		{"unmatched of account 222", recon.TransactionSearch{Matched: recon.StateUnmatched, TransactionFilter: recon.TransactionFilter{AccountNumber: "222"}}, []string{"R6"}, true, 1},
		{"open exceptions", recon.TransactionSearch{Matched: recon.StateException}, []string{"R5", "R6", "R3", "R2"}, false, 0},
		{"memo without accents", recon.TransactionSearch{Memo: "nguyen van an"}, []string{"R6", "R1"}, false, 0},
		{"memo with accents", recon.TransactionSearch{Memo: "Tiền Điện"}, []string{"R3"}, false, 0},
		{"memo with HTML", recon.TransactionSearch{Memo: "<b>"}, []string{"R3"}, false, 0},
		{"memo nowhere", recon.TransactionSearch{Memo: "zzz"}, []string{}, false, 0},
		{"code and state", recon.TransactionSearch{Code: "DH70001", Matched: recon.StateUnmatched}, []string{"R5"}, false, 0},
		{"code and account", recon.TransactionSearch{Code: "DH70001", TransactionFilter: recon.TransactionFilter{BankAccountID: a2.ID}}, []string{}, false, 0},
		{"memo and amount", recon.TransactionSearch{Memo: "nguyen", TransactionFilter: recon.TransactionFilter{AmountIn: ptr(8_000)}}, []string{"R6"}, false, 0},
		{"state and reference", recon.TransactionSearch{Matched: recon.StateMatched, TransactionFilter: recon.TransactionFilter{ReferenceNumber: "R2"}}, []string{"R2"}, false, 0},
		{"state and dates", recon.TransactionSearch{Matched: recon.StateMatched, TransactionFilter: recon.TransactionFilter{FromDate: "2026-03-02"}}, []string{}, true, 0},
	} {
		p := search(c.ID, tc.q)
		diff(t, tc.name, tc.want, refs(p))
		if p.Counted != tc.counted || p.Total != tc.total || p.Next != 0 {
			t.Errorf("%s: counted %v total %d next %d, want %v %d 0", tc.name, p.Counted, p.Total, p.Next, tc.counted, tc.total)
		}
	}
	// What the page read: every row of the filter, back to the oldest.
	p := search(c.ID, recon.TransactionSearch{Memo: "nguyen"})
	if p.Scanned != 6 || !p.ReadTo.Equal(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("read %d back to %s, want 6 back to the 1st 10:00", p.Scanned, p.ReadTo)
	}
	// Rows are the whole transaction, as the listing's.
	if r := p.Rows[1]; r.ReferenceNumber != "R1" || r.Code != "DH70001" || r.AmountIn != 100_000 || r.AccountNumber != "111" || r.CompanyID != c.ID {
		t.Errorf("row: %+v", r)
	}

	// Keyset pages of one: each page continues after the last shown.
	var got []string
	q := recon.TransactionSearch{Matched: recon.StateUnmatched}
	q.Limit = 1
	for range 10 {
		p := search(c.ID, q)
		got = append(got, refs(p)...)
		if !p.Counted || p.Total != 3 {
			t.Errorf("page after %d: counted %v total %d, want the exact 3 on every page", q.Before, p.Counted, p.Total)
		}
		if p.Next == 0 {
			break
		}
		q.Before = p.Next
	}
	diff(t, "unmatched a page of one at a time", []string{"R5", "R6", "R3"}, got)

	// Tenants: the other company and the test mode see their own row only.
	for _, id := range []int64{other.ID, tt.ID} {
		p := search(id, recon.TransactionSearch{Code: "DH70001", Memo: "nguyen"})
		if len(p.Rows) != 1 || p.Rows[0].ReferenceNumber != "X1" || p.Rows[0].CompanyID != id {
			t.Errorf("company %d: %v", id, refs(p))
		}
		if p := search(id, recon.TransactionSearch{Matched: recon.StateUnmatched}); p.Total != 1 || len(p.Rows) != 1 {
			t.Errorf("company %d unmatched: total %d, %v", id, p.Total, refs(p))
		}
	}
	// Continuing after another tenant's transaction is refused.
	x := search(other.ID, recon.TransactionSearch{Code: "DH70001"})
	_, err := s.SearchTransactions(t.Context(), c.ID, recon.TransactionSearch{Memo: "a", Before: x.Rows[0].ID, TransactionFilter: recon.TransactionFilter{Limit: 20}})
	wantCode(t, err, recon.EINVALID, "")
}

func testSearchWindow(t *testing.T, bundle *accountBundle) {
	s, c, a := bundle.s, bundle.c, bundle.a
	// 5,001 transfers, one a minute; the oldest alone mentions "hoàn tiền".
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const n = 5_001
	for start := 0; start < n; start += 1000 {
		var in []recon.TransactionInput
		for i := start; i < min(n, start+1000); i++ {
			r := tx(a.ID, fmt.Sprintf("W%d", i), t0.Add(time.Duration(i)*time.Minute).Format(recon.DateTimeLayout), 1_000, 0)
			if i == 0 {
				r.Content = "hoàn tiền đơn cũ"
			}
			in = append(in, r)
		}
		if _, err := s.IngestTransactions(t.Context(), c.ID, in, make([]string, len(in))); err != nil {
			t.Fatal(err)
		}
	}
	q := recon.TransactionSearch{Memo: "HOAN TIEN"}
	q.Limit = 20
	p, err := s.SearchTransactions(t.Context(), c.ID, q)
	if err != nil {
		t.Fatal(err)
	}
	// The first page reads a bounded window and says where it stopped.
	if len(p.Rows) != 0 || p.Counted || p.Next == 0 || p.Scanned >= n || !p.ReadTo.After(t0) {
		t.Fatalf("first page: %d rows, counted %v, next %d, read %d back to %s", len(p.Rows), p.Counted, p.Next, p.Scanned, p.ReadTo)
	}
	read := p.Scanned
	q.Before = p.Next
	if p, err = s.SearchTransactions(t.Context(), c.ID, q); err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) != 1 || p.Rows[0].ReferenceNumber != "W0" || p.Next != 0 || read+p.Scanned != n || !p.ReadTo.Equal(t0) {
		t.Fatalf("second page: %d rows, next %d, read %d+%d back to %s", len(p.Rows), p.Next, read, p.Scanned, p.ReadTo)
	}
}
