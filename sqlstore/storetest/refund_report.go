package storetest

import (
	"context"
	"testing"
	"time"

	"recon"
)

// refundReporter is the reconciliation report's refunds (sqlstore.DB.RefundTotals;
// docs/dashboard.md, Report) and an order read by its internal id (OrderByID).
type refundReporter interface {
	RefundTotals(ctx context.Context, tenant recon.TenantID, from, to string, loc *time.Location) (*recon.RefundTotals, error)
	OrderByID(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Order, error)
}

// testRefundTotals: the refunds created over a range of days in a time
// zone, by status, their held sum; per tenant; bad ranges refused. And
// OrderByID, per tenant.
func testRefundTotals(t *testing.T, f *refundFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	s := storeAs[refundReporter](t, f.s)
	o, _ := f.paidOrder(t, "INV-1", "DH70001", 100_000, 100_000)
	f.create(t, f.byOrder(o, 10_000)) // 2026-03-02 09:00 UTC, 16:00 in Hanoi
	cancelled := f.create(t, f.byOrder(o, 20_000))
	if _, err := f.s.ChangeRefund(ctx, tenant, cancelled.ID, recon.RefundChange{Event: recon.RefundCancel}, refundAt); err != nil {
		t.Fatal(err)
	}
	// 18:00 UTC is already the next day in Hanoi.
	if _, err := f.s.CreateRefund(ctx, tenant, f.byOrder(o, 30_000), time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	hanoi, err := time.LoadLocation("Asia/Ho_Chi_Minh")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		loc                       *time.Location
		from, to                  string
		pending, cancelled, count int64
		pendingAmount, heldAmount int64
	}{
		{nil, "2026-03-02", "2026-03-02", 2, 1, 2, 40_000, 40_000},
		{hanoi, "2026-03-02", "2026-03-02", 1, 1, 1, 10_000, 10_000},
		{hanoi, "2026-03-03", "2026-03-03", 1, 0, 1, 30_000, 30_000},
		{hanoi, "2026-03-01", "2026-03-03", 2, 1, 2, 40_000, 40_000},
		{nil, "2026-03-03", "2026-03-31", 0, 0, 0, 0, 0},
	} {
		tot, err := s.RefundTotals(ctx, tenant, c.from, c.to, c.loc)
		if err != nil {
			t.Fatal(err)
		}
		n, held, ok := tot.Held()
		if tot.Counts[recon.RefundPending] != c.pending || tot.Amounts[recon.RefundPending] != c.pendingAmount ||
			tot.Counts[recon.RefundCancelled] != c.cancelled || n != c.count || held != c.heldAmount || !ok || len(tot.Counts) != len(recon.RefundStatuses) {
			t.Errorf("%v %s..%s: %+v held %d %d", c.loc, c.from, c.to, tot, n, held)
		}
	}
	other := newCompany(t, f.s, 2)
	test, err := f.s.TestTenant(ctx, f.c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range []recon.TenantID{other.Tenant(), test.ID} {
		if tot, err := s.RefundTotals(ctx, tn, "2026-03-01", "2026-03-31", nil); err != nil || tot.Counts[recon.RefundPending] != 0 {
			t.Errorf("another tenant's totals: %+v %v", tot, err)
		}
		_, err := s.OrderByID(ctx, tn, o.ID)
		wantCode(t, err, recon.ENOTFOUND, "")
	}
	if got, err := s.OrderByID(ctx, tenant, o.ID); err != nil || got.InvoiceNumber != "INV-1" {
		t.Errorf("OrderByID: %+v %v", got, err)
	}
	for _, r := range [][2]string{{"2026-03-02", "2026-03-01"}, {"x", "2026-03-01"}, {"2026-03-01", ""}} {
		_, err := s.RefundTotals(ctx, tenant, r[0], r[1], nil)
		wantCode(t, err, recon.EINVALID, "")
	}
}
