package sqlstore_test

import (
	"fmt"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// TestRepeatedPushIsPlannedBeforeItsInsert (PostgreSQL): a batch repeating
// stored rows has its stored references read before the insert, so that no
// insert fails on them (each failure is an error in PostgreSQL's log): the
// id sequence moves only for the new row beside them, whose id follows the
// last one. Planned after a failed insert instead, the new row's id would
// skip the value the failure took.
func TestRepeatedPushIsPlannedBeforeItsInsert(t *testing.T) {
	t.Parallel()
	db := dbtest.OpenStore(t, sqlstore.EnginePostgres)
	ctx := t.Context()
	c, a := companyWithAccount(t, db, "111")
	row := func(i int) recon.TransactionInput {
		return recon.TransactionInput{BankAccountID: a.ID, TransactionDate: time.Date(2026, 3, 1, 9, i, 0, 0, time.UTC),
			AmountIn: int64(10_000 + i), Content: fmt.Sprintf("chuyen tien %d", i), ReferenceNumber: fmt.Sprintf("FT%d", i)}
	}
	first, err := db.IngestTransactions(ctx, c.Tenant(), []recon.TransactionInput{row(1), row(2)}, []string{"", ""})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := db.SQL().QueryRowContext(ctx, `SELECT last_value FROM transactions_id_seq`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	again, err := db.IngestTransactions(ctx, c.Tenant(), []recon.TransactionInput{row(1), row(2), row(3)}, []string{"", "", ""})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if !again[i].Duplicate || again[i].ID != first[i].ID {
			t.Fatalf("repeated row %d: %+v, want a duplicate of row %d", i, again[i], first[i].ID)
		}
	}
	if again[2].Duplicate || again[2].ID != last+1 {
		t.Fatalf("the new row: %+v, want id %d (the sequence's next): an insert failed on the repeated rows first", again[2], last+1)
	}
}
