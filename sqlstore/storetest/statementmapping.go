package storetest

import (
	"context"
	"testing"

	"recon"
)

// mappingStore is the saved column mapping of a bank account
// (docs/statements.md, Column mappings).
type mappingStore interface {
	StatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64) (*recon.StatementMapping, error)
	SetStatementMapping(ctx context.Context, tenant recon.TenantID, bankAccountID int64, m *recon.StatementMapping) error
}

// testStatementMapping: a bank account's mapping is saved, replaced and
// removed; another company's or the other mode's bank account is ENOTFOUND
// and keeps its own; the mapping goes with its bank account.
func testStatementMapping(t *testing.T, s recon.Store) {
	ms, ok := s.(mappingStore)
	if !ok {
		t.Skip("the store keeps no statement mappings")
	}
	ctx := t.Context()
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	a := newAccount(t, s, c.ID, "0071001234567")
	b := newAccount(t, s, other.ID, "0071009999999")
	live := recon.LiveTenant(c.ID)
	if m, err := ms.StatementMapping(ctx, live, a.ID); err != nil || m != nil {
		t.Fatalf("no mapping yet: %+v, %v", m, err)
	}
	m := &recon.StatementMapping{Date: "Thời điểm", AmountIn: "Tiền về", AmountOut: "Tiền đi", Content: "Lời nhắn", Reference: "Mã"}
	if err := ms.SetStatementMapping(ctx, live, a.ID, m); err != nil {
		t.Fatal(err)
	}
	got, err := ms.StatementMapping(ctx, live, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "saved mapping", m, got)
	m2 := &recon.StatementMapping{Date: "Ngày", Amount: "Số tiền", Content: "Ghi chú", Balance: "Số dư"}
	if err := ms.SetStatementMapping(ctx, live, a.ID, m2); err != nil {
		t.Fatal(err)
	}
	got, _ = ms.StatementMapping(ctx, live, a.ID)
	diff(t, "replaced mapping", m2, got)
	// Another company's account, and the test mode's view of this one.
	_, err = ms.StatementMapping(ctx, live, b.ID)
	wantCode(t, err, recon.ENOTFOUND, "")
	wantCode(t, ms.SetStatementMapping(ctx, live, b.ID, m), recon.ENOTFOUND, "")
	tt := testTenant(t, s, c.ID)
	_, err = ms.StatementMapping(ctx, tt.ID, a.ID)
	wantCode(t, err, recon.ENOTFOUND, "")
	wantCode(t, ms.SetStatementMapping(ctx, tt.ID, a.ID, m), recon.ENOTFOUND, "")
	if got, err := ms.StatementMapping(ctx, recon.LiveTenant(other.ID), b.ID); err != nil || got != nil {
		t.Fatalf("the other company's account: %+v, %v", got, err)
	}
	// Removed.
	if err := ms.SetStatementMapping(ctx, live, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ms.StatementMapping(ctx, live, a.ID); err != nil || got != nil {
		t.Fatalf("removed: %+v, %v", got, err)
	}
}
