package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"recon"
	"recon/api"
	"recon/sqlstore/dbtest"
	"recon/web"
)

// TestPatchCompany: PATCH /api/v1/company sets the seller's legal details
// and invoice settings (docs/invoices.md, The seller); a bad field is a 400
// naming it and writes nothing; the other company is untouched.
func TestPatchCompany(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		b := setup(t, engine)
		status, _, body := b.do(t, "PATCH", "/api/v1/company", "admin", `{"legal_name":"Công ty TNHH Sao Mai","tax_code":"0100112437001",
			"address":"1 Lý Thường Kiệt, Hà Nội","phone":"0243934123","email":"ketoan@saomai.vn","bank_name":"Vietcombank",
			"bank_account":"0011004123456","invoice_series":"C26TAA","auto_invoice":true}`)
		if status != 200 {
			t.Fatalf("status %d: %v", status, body)
		}
		wantSeller := map[string]any{"legal_name": "Công ty TNHH Sao Mai", "tax_code": "0100112437-001", "address": "1 Lý Thường Kiệt, Hà Nội",
			"phone": "0243934123", "email": "ketoan@saomai.vn", "bank_name": "Vietcombank", "bank_account": "0011004123456"}
		wantInvoicing := map[string]any{"invoice_template": "1", "invoice_series": "C26TAA", "auto_invoice": true}
		check := func(what string, body map[string]any) {
			t.Helper()
			data := body["data"].(map[string]any)
			if d := cmp.Diff(wantSeller, data["seller"]); d != "" {
				t.Fatalf("%s: seller (-want +got):\n%s", what, d)
			}
			if d := cmp.Diff(wantInvoicing, data["invoicing"]); d != "" {
				t.Fatalf("%s: invoicing (-want +got):\n%s", what, d)
			}
		}
		check("PATCH answer", body)
		_, _, body = b.do(t, "GET", "/api/v1/company", "admin", "")
		check("GET after PATCH", body)

		for _, tc := range []struct{ name, body, field string }{
			{"wrong check digit", `{"tax_code":"0100112438"}`, "tax_code"},
			{"9 digits", `{"tax_code":"010011243"}`, "tax_code"},
			{"branch 000", `{"tax_code":"0100112437-000"}`, "tax_code"},
			{"bad series", `{"invoice_series":"C26ZAA"}`, "invoice_series"},
			{"lower-case series", `{"invoice_series":"c26taa"}`, "invoice_series"},
			{"template 3", `{"invoice_template":"3"}`, "invoice_template"},
			{"bad email", `{"email":"ketoan"}`, "email"},
			{"bad phone", `{"phone":"12ab"}`, "phone"},
			{"auto_invoice without a tax code", `{"tax_code":""}`, "auto_invoice"},
			{"long legal name", `{"legal_name":"` + stringOf('A', recon.MaxSellerLegalName+1) + `"}`, "legal_name"},
		} {
			status, _, body := b.do(t, "PATCH", "/api/v1/company", "admin", tc.body)
			errs, _ := body["errors"].(map[string]any)
			if status != 400 || body["error"] != "validation_error" || errs[tc.field] == nil {
				t.Errorf("%s: %d %v, want 400 validation_error naming %s", tc.name, status, body, tc.field)
			}
		}
		for _, tc := range []struct{ name, body string }{
			{"malformed", `{"tax_code":`},
			{"unknown field", `{"tax_number":"0100112437"}`},
			{"wrong type", `{"auto_invoice":"yes"}`},
			{"number for a string", `{"tax_code":100112437}`},
			{"nothing", `{}`},
			{"array", `[]`},
		} {
			status, _, body := b.do(t, "PATCH", "/api/v1/company", "admin", tc.body)
			if status != 400 || body["error"] != "validation_error" {
				t.Errorf("%s: %d %v, want 400 validation_error", tc.name, status, body)
			}
		}
		_, _, body = b.do(t, "GET", "/api/v1/company", "admin", "")
		check("after refused PATCHes", body)
		for _, tok := range []string{"member", "machine", "viewer"} {
			if status, _, body := b.do(t, "PATCH", "/api/v1/company", tok, `{"legal_name":"X"}`); status != 403 {
				t.Errorf("%s: %d %v, want 403", tok, status, body)
			}
		}
		// One audit entry, of the one change that was made: before and
		// after under the store's lock, who through which client, from where.
		entries, total, err := b.store.AuditEntries(context.Background(), b.company.Tenant(), recon.AuditFilter{Page: 1, PerPage: 10})
		if err != nil || total != 1 {
			t.Fatalf("audit: %d %v", total, err)
		}
		e := entries[0]
		if e.Action != recon.AuditSellerUpdate || e.Actor.Via != recon.AuditViaAPI || e.Actor.IP != "127.0.0.1" || e.Actor.UserID == 0 || e.Actor.ClientID == "" ||
			!slices.Contains(e.Changes, recon.AuditChange{Field: "seller_tax_code", After: "0100112437-001"}) ||
			!slices.Contains(e.Changes, recon.AuditChange{Field: "auto_invoice", Before: "false", After: "true"}) {
			t.Errorf("audit entry %+v", e)
		}
		if _, total, _ := b.store.AuditEntries(context.Background(), b.other.Tenant(), recon.AuditFilter{Page: 1, PerPage: 10}); total != 0 {
			t.Errorf("the other company's log has %d entries", total)
		}
		// The other company's seller is untouched.
		_, _, other := b.do(t, "GET", "/api/v1/company", "other-admin", "")
		if s := other["data"].(map[string]any)["seller"].(map[string]any); s["tax_code"] != "" || s["legal_name"] != "" {
			t.Fatalf("other company's seller: %v", s)
		}
	})
}

func stringOf(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// TestPatchCompanyTestCredential: the seller is shared by the company's
// modes, so a test credential cannot change it.
func TestPatchCompanyTestCredential(t *testing.T) {
	db := dbtest.OpenStore(t, "sqlite")
	co := &recon.Company{FullName: "A", ShortName: "A", Status: recon.CompanyActive, Subscription: "x"}
	if err := db.CreateCompany(t.Context(), co); err != nil {
		t.Fatal(err)
	}
	tt, err := db.TestTenant(t.Context(), co.ID)
	if err != nil {
		t.Fatal(err)
	}
	mux := web.NewMux()
	auth := tokens{"t": {Tenant: tt.ID, Scopes: []string{recon.ScopeCompany}, User: &recon.User{Company: co.ID, Role: recon.RoleAdmin}}}
	(&api.Handler{Store: db, Auth: auth, Logger: slog.New(slog.DiscardHandler)}).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := &bundle{srv: srv}
	if status, _, body := b.do(t, "PATCH", "/api/v1/company", "t", `{"legal_name":"X"}`); status != 403 {
		t.Fatalf("test credential: %d %v, want 403", status, body)
	}
	if got, _ := db.Company(t.Context(), co.ID); got.Config.Seller.LegalName != "" {
		t.Fatal("a test credential changed the seller")
	}
}
