package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
)

func testCompany(t *testing.T, open Open) {
	run(t, "CreateAndRead", open, testCompanyCreateAndRead)
	run(t, "Minimal", open, testCompanyMinimal)
	run(t, "WithFormats", open, testCompanyWithFormats)
	run(t, "DistinctIDs", open, testCompanyDistinctIDs)
	run(t, "NotFound", open, testCompanyNotFound)
	run(t, "BadDate", open, testCompanyBadDate)
	run(t, "DuplicatePrefixStoresNothing", open, testCompanyDuplicatePrefixStoresNothing)
	run(t, "Seller", open, testCompanySeller)
	run(t, "SellerRefusedStoresNothing", open, testCompanySellerRefusedStoresNothing)
}

func testCompanyCreateAndRead(t *testing.T, s recon.Store) {
	want := &recon.Company{
		FullName: "Công ty TNHH Thanh Toán", ShortName: "thanhtoan", Status: recon.CompanyActive,
		Subscription: "premium", BeginDate: "2024-01-31", EndDate: "2025-12-31",
		Config: recon.CompanyConfig{BankSubAccount: true, Paycode: true, DataStorageDays: 365},
	}
	if err := s.CreateCompany(t.Context(), want); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	if want.ID <= 0 {
		t.Fatalf("CreateCompany set ID %d, want > 0", want.ID)
	}
	recent(t, "CreatedAt", want.CreatedAt)
	got, err := s.Company(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	wantUTC(t, "CreatedAt", got.CreatedAt)
	diff(t, "company", want, got)
}

func testCompanyMinimal(t *testing.T, s recon.Store) {
	want := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyInactive}
	if err := s.CreateCompany(t.Context(), want); err != nil {
		t.Fatalf("CreateCompany: %v", err)
	}
	got, err := s.Company(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "company", want, got)
}

func testCompanyWithFormats(t *testing.T, s recon.Store) {
	// Not in prefix order: the stored order is the given order.
	want := newCompany(t, s, 1, format("ZZ"), format("AB"), format("XYZ"), format("MN"))
	got, err := s.Company(t.Context(), want.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "company", want, got)
}

func testCompanyDistinctIDs(t *testing.T, s recon.Store) {
	a, b := newCompany(t, s, 1), newCompany(t, s, 2)
	if a.ID == b.ID {
		t.Fatalf("two companies got ID %d", a.ID)
	}
	got, err := s.Company(t.Context(), b.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "second company", b, got)
}

func testCompanyNotFound(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	_, err := s.Company(t.Context(), c.ID+1000)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+1000))
}

func testCompanyBadDate(t *testing.T, s recon.Store) {
	c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive, BeginDate: "31/01/2024"}
	wantCode(t, s.CreateCompany(t.Context(), c), recon.EINVALID, "")
}

func testCompanyDuplicatePrefixStoresNothing(t *testing.T, s recon.Store) {
	c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive,
		Config: recon.CompanyConfig{PaymentCodeFormats: []recon.PaymentCodeFormat{format("AB"), format("AB")}}}
	wantCode(t, s.CreateCompany(t.Context(), c), recon.ECONFLICT, "")
	if c.ID != 0 {
		t.Fatalf("a failed CreateCompany set ID %d", c.ID)
	}
	// The company row was rolled back with its formats: every id before
	// the next company's is unused (PostgreSQL does not reuse the id).
	next := newCompany(t, s, 2)
	for id := int64(1); id < next.ID; id++ {
		if _, err := s.Company(t.Context(), id); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Fatalf("company %d after a failed create: got error %v, want not found", id, err)
		}
	}
}

func testCompanyUpdate(t *testing.T, open Open) {
	run(t, "ListAndStatus", open, testCompanyUpdateListAndStatus)
	run(t, "EmptyList", open, testCompanyUpdateEmptyList)
	run(t, "Partial", open, testCompanyUpdatePartial)
	run(t, "RefusedStoresNothing", open, testCompanyUpdateRefusedStoresNothing)
	run(t, "ConcurrentFieldsBothKept", open, testCompanyUpdateConcurrentFieldsBothKept)
	run(t, "InactiveDeliveriesWait", open, testCompanyUpdateInactiveDeliveriesWait)
}

func testCompanyUpdateListAndStatus(t *testing.T, s recon.Store) {
	a := newCompany(t, s, 1, format("AB"))
	b := &recon.Company{FullName: "B", ShortName: "b", Status: recon.CompanyInactive}
	if err := s.CreateCompany(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	list, err := s.Companies(t.Context())
	if err != nil {
		t.Fatalf("Companies: %v", err)
	}
	wantA := *a
	wantA.Config.PaymentCodeFormats = nil // the list leaves formats out
	diff(t, "companies", []*recon.Company{&wantA, b}, list)
	for _, c := range []*recon.Company{a, b} {
		want := &recon.Tenant{ID: recon.LiveTenant(c.ID), Company: c.ID, Status: c.Status}
		got, err := s.Tenant(t.Context(), c.ID)
		if err != nil {
			t.Fatalf("Tenant(%d): %v", c.ID, err)
		}
		diff(t, "tenant", want, got)
		if got, err = s.TenantOf(t.Context(), c.ID, true); err != nil {
			t.Fatalf("TenantOf(%d, live): %v", c.ID, err)
		}
		diff(t, "live tenant", want, got)
	}
	_, err = s.Tenant(t.Context(), b.ID+100)
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", b.ID+100))
}

func testCompanyUpdateEmptyList(t *testing.T, s recon.Store) {
	list, err := s.Companies(t.Context())
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("Companies = %#v, %v; want an empty list", list, err)
	}
}

func testCompanyUpdatePartial(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1, format("AB"), format("CD"))
	other := newCompany(t, s, 2, format("EF"))
	got, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
		diff(t, "company seen by update", c, u)
		u.Status, u.Config.Paycode, u.Config.DataStorageDays, u.EndDate = recon.CompanyInactive, true, 90, "2030-12-31"
		u.Config.PaymentCodeFormats = nil    // not written
		u.ID, u.CreatedAt = 999, time.Time{} // not written
		return u.Validate()
	})
	if err != nil {
		t.Fatalf("UpdateCompany: %v", err)
	}
	want := *c
	want.Status, want.Config.Paycode, want.Config.DataStorageDays, want.EndDate = recon.CompanyInactive, true, 90, "2030-12-31"
	diff(t, "returned company", &want, got)
	stored, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "stored company", &want, stored)
	if o, _ := s.Company(t.Context(), other.ID); o == nil {
		t.Fatal("other company gone")
	} else {
		diff(t, "other company", other, o)
	}
}

func testCompanyUpdateRefusedStoresNothing(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	_, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
		u.ShortName, u.Status = "changed", "paused"
		return u.Validate()
	})
	wantCode(t, err, recon.EINVALID, `status must be "active" or "inactive"`)
	_, err = s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
		u.ShortName, u.BeginDate = "changed", "2024-13-01"
		return nil // the store checks dates itself
	})
	wantCode(t, err, recon.EINVALID, "begin_date must be a date in the form YYYY-MM-DD")
	got, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "company after refused updates", c, got)
	_, err = s.UpdateCompany(t.Context(), c.ID+50, func(*recon.Company) error {
		t.Error("update called for a missing company")
		return nil
	})
	wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+50))
}

func testCompanyUpdateConcurrentFieldsBothKept(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	// Each update changes its own field; the row lock makes them run one
	// after the other, so neither writes back a stale copy of the other's.
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
				u.Config.DataStorageDays++
				return nil
			})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := s.UpdateCompany(t.Context(), c.ID, func(u *recon.Company) error {
				u.Subscription = fmt.Sprintf("%s+%d", u.Subscription, i)
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config.DataStorageDays != c.Config.DataStorageDays+n || strings.Count(got.Subscription, "+") != n {
		t.Fatalf("after %d concurrent updates of each field: days %d, subscription %q", n, got.Config.DataStorageDays, got.Subscription)
	}
}

func testCompanyUpdateInactiveDeliveriesWait(t *testing.T, s recon.Store) {
	ds := storeAs[recon.DeliveryStore](t, s)
	c, other := newCompany(t, s, 1), newCompany(t, s, 2)
	d := enqueue(t, ds, c.ID, "ORDER_PAID")
	o := enqueue(t, ds, other.ID, "ORDER_PAID")
	setStatus(t, s, c.ID, recon.CompanyInactive)
	claimed, err := ds.ClaimDeliveries(t.Context(), "node", time.Now().Add(time.Minute), 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "claimed while inactive", []int64{o.ID}, ids(claimed))
	kept, err := ds.Delivery(t.Context(), c.Tenant(), d.ID)
	if err != nil || kept.Status != recon.DeliveryPending || kept.Attempts != 0 || !kept.LeaseUntil.IsZero() {
		t.Fatalf("inactive company's delivery = %+v, %v; want pending, untouched", kept, err)
	}
	setStatus(t, s, c.ID, recon.CompanyActive)
	claimed, err = ds.ClaimDeliveries(t.Context(), "node", time.Now().Add(time.Minute), 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "claimed once active again", []int64{d.ID}, ids(claimed))
}

// setStatus sets the company's status.
func setStatus(t *testing.T, s recon.Store, companyID int64, status string) {
	t.Helper()
	if _, err := s.UpdateCompany(t.Context(), companyID, func(c *recon.Company) error {
		c.Status = status
		return c.Validate()
	}); err != nil {
		t.Fatalf("UpdateCompany(status %s): %v", status, err)
	}
}

func testPaymentCodeFormats(t *testing.T, open Open) {
	run(t, "Replace", open, testPaymentCodeFormatsReplace)
	run(t, "EmptyClears", open, testPaymentCodeFormatsEmptyClears)
	run(t, "TenantIsolation", open, testPaymentCodeFormatsTenantIsolation)
	run(t, "UnknownCompany", open, testPaymentCodeFormatsUnknownCompany)
	run(t, "DuplicatePrefixKeepsOld", open, testPaymentCodeFormatsDuplicatePrefixKeepsOld)
}

func testPaymentCodeFormatsReplace(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1, format("AB"), format("CD"), format("EF"))
	formats := []recon.PaymentCodeFormat{format("EF"), format("XAB"), format("GH")}
	cfg, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID, formats)
	if err != nil {
		t.Fatalf("ReplacePaymentCodeFormats: %v", err)
	}
	want := c.Config
	want.PaymentCodeFormats = formats
	diff(t, "returned config", &want, cfg)
	got, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "stored config", want, got.Config)
}

func testPaymentCodeFormatsEmptyClears(t *testing.T, s recon.Store) {
	for _, empty := range [][]recon.PaymentCodeFormat{{}, nil} {
		c := newCompany(t, s, 1, format("AB"), format("CD"))
		cfg, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID, empty)
		if err != nil {
			t.Fatalf("ReplacePaymentCodeFormats(%#v): %v", empty, err)
		}
		if len(cfg.PaymentCodeFormats) != 0 {
			t.Fatalf("returned formats %v, want none", cfg.PaymentCodeFormats)
		}
		got, err := s.Company(t.Context(), c.ID)
		if err != nil {
			t.Fatalf("Company: %v", err)
		}
		if len(got.Config.PaymentCodeFormats) != 0 {
			t.Fatalf("stored formats %v, want none", got.Config.PaymentCodeFormats)
		}
	}
}

func testPaymentCodeFormatsTenantIsolation(t *testing.T, s recon.Store) {
	a := newCompany(t, s, 1, format("AB"), format("CD"))
	b := newCompany(t, s, 2, format("AB"), format("CD"))
	if _, err := s.ReplacePaymentCodeFormats(t.Context(), a.ID, []recon.PaymentCodeFormat{format("QQ")}); err != nil {
		t.Fatalf("ReplacePaymentCodeFormats: %v", err)
	}
	if _, err := s.ReplacePaymentCodeFormats(t.Context(), a.ID, nil); err != nil {
		t.Fatalf("ReplacePaymentCodeFormats: %v", err)
	}
	got, err := s.Company(t.Context(), b.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "other company", b, got)
}

func testPaymentCodeFormatsUnknownCompany(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1)
	for _, formats := range [][]recon.PaymentCodeFormat{nil, {format("AB")}} {
		_, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID+7, formats)
		wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+7))
	}
}

func testPaymentCodeFormatsDuplicatePrefixKeepsOld(t *testing.T, s recon.Store) {
	c := newCompany(t, s, 1, format("AB"), format("CD"))
	_, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID, []recon.PaymentCodeFormat{format("EF"), format("EF")})
	wantCode(t, err, recon.ECONFLICT, "")
	got, err := s.Company(t.Context(), c.ID)
	if err != nil {
		t.Fatalf("Company: %v", err)
	}
	diff(t, "company after a failed replace", c, got)
}
