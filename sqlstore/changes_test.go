package sqlstore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestChangeLogInRuns: the change log keeps runs of consecutive ids of one
// kind, a row each (migration 00056), and the sync reads every change of
// them in order, each with its own number, whatever the page's size and
// wherever a page ends inside a run; migration 00056's Down spells the
// runs out one row a change, numbered as they were read.
func TestChangeLogInRuns(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		db := dbtest.OpenStore(t, engine)
		ctx := t.Context()
		c, a := companyWithAccount(t, db, "111")
		var want []string // "seq kind id", the log in order
		// A batch's added rows: one run.
		var in []recon.TransactionInput
		for i := range 5 {
			in = append(in, recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 9, i, 0, 0, time.UTC),
				AmountIn: 1000, Content: "chuyen tien", ReferenceNumber: fmt.Sprint("R", i)})
		}
		res, err := db.IngestTransactions(ctx, c.Tenant(), in, make([]string, len(in)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			want = append(want, fmt.Sprintf("%d added %d", len(want)+1, r.ID))
		}
		rowsLogged := func() (n int) {
			t.Helper()
			if err := db.Pool().QueryRowContext(ctx, `SELECT count(*) FROM transaction_changes WHERE company_id = $1`, c.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := rowsLogged(); n != 1 {
			t.Fatalf("a batch of 5 rows logged %d rows, want 1 run", n)
		}
		// Changes of transactions that do not exist (any more): each is read
		// with its id and kind, and without a transaction.
		var ids []int64
		var kinds []string
		add := func(kind string, from int64, n int) {
			for i := range int64(n) {
				ids, kinds = append(ids, from+i), append(kinds, kind)
				want = append(want, fmt.Sprintf("%d %s %d", len(want)+1, kind, from+i))
			}
		}
		add("added", 1000, 8)
		add("added", 2000, 7)
		add("modified", 2007, 8) // consecutive with the last, another kind: a run of its own
		add("added", 3000, 1)
		add("modified", 3002, 1) // of one kind with the last, not consecutive
		add("removed", 4000, 24)
		if err := db.LogChanges(ctx, c.ID, ids, kinds); err != nil {
			t.Fatal(err)
		}
		if n := rowsLogged(); n != 1+6 {
			t.Fatalf("the log holds %d rows, want 7 runs", n)
		}
		read := func(limit int) []string {
			t.Helper()
			var got []string
			after := int64(-1)
			for range len(want) + 1 {
				page, err := db.TransactionChanges(ctx, c.Tenant(), after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page.Changes) > limit {
					t.Fatalf("a page of %d changes, limit %d", len(page.Changes), limit)
				}
				for _, ch := range page.Changes {
					got = append(got, fmt.Sprintf("%d %s %d", ch.Seq, ch.Kind, ch.TransactionID))
					if exists := ch.TransactionID < 1000; exists != (ch.Transaction != nil) {
						t.Fatalf("change %d of transaction %d read with %+v", ch.Seq, ch.TransactionID, ch.Transaction)
					}
					if ch.Transaction != nil && (ch.Transaction.ID != ch.TransactionID || ch.Transaction.BankAccountID != a.ID) {
						t.Fatalf("change %d read transaction %+v", ch.Seq, ch.Transaction)
					}
				}
				if !page.HasMore {
					return got
				}
				after = page.Next
			}
			t.Fatalf("paging by %d never ends", limit)
			return nil
		}
		for _, limit := range []int{1, 2, 3, 7, 100} {
			if got := read(limit); !slices.Equal(got, want) {
				t.Fatalf("by pages of %d the log reads\n%v\nwant\n%v", limit, got, want)
			}
		}

		if err := db.MigrateTo(ctx, 55); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Pool().QueryContext(ctx, `SELECT seq, kind, transaction_id FROM transaction_changes WHERE company_id = $1 ORDER BY seq`, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var spelled []string
		for rows.Next() {
			var seq, id int64
			var kind string
			if err := rows.Scan(&seq, &kind, &id); err != nil {
				t.Fatal(err)
			}
			spelled = append(spelled, fmt.Sprintf("%d %s %d", seq, kind, id))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(spelled, want) {
			t.Fatalf("after 00056's Down the log holds\n%v\nwant\n%v", spelled, want)
		}
		if err := db.MigrateTo(ctx, 56); err != nil {
			t.Fatal(err)
		}
		if got := read(5); !slices.Equal(got, want) {
			t.Fatalf("migrated up again, the log reads\n%v\nwant\n%v", got, want)
		}
	})
}
