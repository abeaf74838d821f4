package storetest

import (
	"fmt"
	"testing"

	"recon"
)

func testCompany(t *testing.T, open Open) {
	t.Run("CreateAndRead", func(t *testing.T) {
		t.Parallel()
		s := open(t)
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
	})
	t.Run("Minimal", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		want := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyInactive}
		if err := s.CreateCompany(t.Context(), want); err != nil {
			t.Fatalf("CreateCompany: %v", err)
		}
		got, err := s.Company(t.Context(), want.ID)
		if err != nil {
			t.Fatalf("Company: %v", err)
		}
		diff(t, "company", want, got)
	})
	t.Run("WithFormats", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		// Not in prefix order: the stored order is the given order.
		want := newCompany(t, s, 1, format("ZZ"), format("AB"), format("XYZ"), format("MN"))
		got, err := s.Company(t.Context(), want.ID)
		if err != nil {
			t.Fatalf("Company: %v", err)
		}
		diff(t, "company", want, got)
	})
	t.Run("DistinctIDs", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		a, b := newCompany(t, s, 1), newCompany(t, s, 2)
		if a.ID == b.ID {
			t.Fatalf("two companies got ID %d", a.ID)
		}
		got, err := s.Company(t.Context(), b.ID)
		if err != nil {
			t.Fatalf("Company: %v", err)
		}
		diff(t, "second company", b, got)
	})
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		_, err := s.Company(t.Context(), c.ID+1000)
		wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+1000))
	})
	t.Run("BadDate", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := &recon.Company{FullName: "F", ShortName: "f", Status: recon.CompanyActive, BeginDate: "31/01/2024"}
		wantCode(t, s.CreateCompany(t.Context(), c), recon.EINVALID, "")
	})
	t.Run("DuplicatePrefixStoresNothing", func(t *testing.T) {
		t.Parallel()
		s := open(t)
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
	})
}

func testPaymentCodeFormats(t *testing.T, open Open) {
	t.Run("Replace", func(t *testing.T) {
		t.Parallel()
		s := open(t)
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
	})
	t.Run("EmptyClears", func(t *testing.T) {
		t.Parallel()
		s := open(t)
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
	})
	t.Run("TenantIsolation", func(t *testing.T) {
		t.Parallel()
		s := open(t)
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
	})
	t.Run("UnknownCompany", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1)
		for _, formats := range [][]recon.PaymentCodeFormat{nil, {format("AB")}} {
			_, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID+7, formats)
			wantCode(t, err, recon.ENOTFOUND, fmt.Sprintf("company %d not found", c.ID+7))
		}
	})
	t.Run("DuplicatePrefixKeepsOld", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		c := newCompany(t, s, 1, format("AB"), format("CD"))
		_, err := s.ReplacePaymentCodeFormats(t.Context(), c.ID, []recon.PaymentCodeFormat{format("EF"), format("EF")})
		wantCode(t, err, recon.ECONFLICT, "")
		got, err := s.Company(t.Context(), c.ID)
		if err != nil {
			t.Fatalf("Company: %v", err)
		}
		diff(t, "company after a failed replace", c, got)
	})
}
