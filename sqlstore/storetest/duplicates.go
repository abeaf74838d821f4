package storetest

import (
	"slices"
	"testing"

	"recon"
)

// Other references and possible duplicates (docs/statements.md, References
// and Possible duplicates).
func testDuplicates(t *testing.T, open Open) {
	run(t, "OtherReferencesStored", withAccount(open), testOtherReferencesStored)
	testPossibleDuplicates(t, open)
}

func testOtherReferencesStored(t *testing.T, b *accountBundle) {
	in := []recon.TransactionInput{tx(b.a.ID, "FT1", "2026-03-01 08:00:00", 100_000, 0), tx(b.a.ID, "FT2", "2026-03-01 09:00:00", 200_000, 0)}
	in[0].References = []string{"E2E-1", "ACSR-1"}
	res, err := b.s.IngestTransactions(t.Context(), b.c.Tenant(), in, []string{"", ""})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.s.Transaction(t.Context(), b.c.Tenant(), res[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ACSR-1", "E2E-1"}; !slices.Equal(got.References, want) {
		t.Fatalf("references %q, want %q", got.References, want)
	}
	got, err = b.s.Transaction(t.Context(), b.c.Tenant(), res[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.References) != 0 {
		t.Fatalf("references %q, want none", got.References)
	}
	// The same batch again is a duplicate and adds no reference.
	if _, err := b.s.IngestTransactions(t.Context(), b.c.Tenant(), in, []string{"", ""}); err != nil {
		t.Fatal(err)
	}
	if got, _ = b.s.Transaction(t.Context(), b.c.Tenant(), res[0].ID); len(got.References) != 2 {
		t.Fatalf("references after a repeat %q", got.References)
	}
}
