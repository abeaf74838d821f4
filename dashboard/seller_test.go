package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore/dbtest"
)

// TestDashboardSeller: the settings screen's seller form (docs/invoices.md,
// The seller), both engines: an Admin saves it, a bad tax code is a 400
// naming it in the page's language and writes nothing, test mode and other
// roles may not change it, the other company is untouched.
func TestDashboardSeller(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newSettingsEnv(t, engine)
		b := e.signedIn(t, "boss@saomai.vn")
		id, _ := parseID(e.live.company)
		stored := func() recon.CompanyConfig {
			co, err := e.db.Company(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			return co.Config
		}
		_, body := b.Get("/dashboard/settings")
		if !strings.Contains(body, `id="seller-form"`) || !strings.Contains(body, "Seller on invoices") {
			t.Fatalf("settings without the seller form: %s", body)
		}
		form := url.Values{"legal_name": {"Công ty TNHH Sao Mai <b>"}, "tax_code": {"0100112437"}, "address": {"1 Lý Thường Kiệt, Hà Nội"},
			"phone": {"0243934123"}, "email": {"hoadon@saomai.vn"}, "bank_name": {"Vietcombank"}, "bank_account": {"0011004123456"},
			"invoice_template": {"1"}, "invoice_series": {"C26TAA"}, "auto_invoice": {"1"}}
		status, loc, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/seller", form)
		if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/settings?saved=seller") {
			t.Fatalf("save seller: %d %s", status, loc)
		}
		want := recon.CompanyConfig{}
		want.Seller = recon.Seller{LegalName: "Công ty TNHH Sao Mai <b>", TaxCode: "0100112437", Address: "1 Lý Thường Kiệt, Hà Nội",
			Phone: "0243934123", Email: "hoadon@saomai.vn", BankName: "Vietcombank", BankAcct: "0011004123456"}
		want.Invoicing = recon.InvoiceSettings{Template: "1", Series: "C26TAA", AutoInvoice: true}
		if got := stored(); got.Seller != want.Seller || got.Invoicing != want.Invoicing {
			t.Fatalf("stored seller %+v %+v", got.Seller, got.Invoicing)
		}
		_, body = b.Get("/dashboard/settings?saved=seller")
		if !strings.Contains(body, `id="seller-saved"`) || !strings.Contains(body, `value="Công ty TNHH Sao Mai &lt;b&gt;"`) || !strings.Contains(body, `value="C26TAA"`) {
			t.Fatalf("saved seller page: %s", body)
		}

		// Refusals: 400 naming the field, the form as typed, nothing stored.
		for field, bad := range map[string]string{"tax_code": "0100112438", "invoice_series": "C26ZAA", "email": "x", "invoice_template": "9"} {
			f := url.Values{}
			for k, v := range form {
				f[k] = v
			}
			f.Set(field, bad)
			status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/seller", f)
			if status != http.StatusBadRequest || !strings.Contains(body, `id="seller-error" data-field="`+field+`"`) {
				t.Errorf("%s %q: %d", field, bad, status)
			}
			if field == "tax_code" && !strings.Contains(body, `value="0100112438"`) {
				t.Errorf("the refused form lost what was typed")
			}
		}
		f := url.Values{"legal_name": {"X"}, "invoice_template": {"1"}, "auto_invoice": {"1"}}
		if status, _, body := b.PostFrom("/dashboard/settings", "/dashboard/settings/seller", f); status != http.StatusBadRequest || !strings.Contains(body, `data-field="auto_invoice"`) {
			t.Errorf("auto_invoice without a tax code: %d", status)
		}
		if got := stored(); got.Seller != want.Seller || got.Invoicing != want.Invoicing {
			t.Fatalf("refused forms changed the seller: %+v %+v", got.Seller, got.Invoicing)
		}
		// In Vietnamese.
		vi := e.signedIn(t, "boss@saomai.vn")
		vi.Lang = "vi"
		bad := url.Values{}
		for k, v := range form {
			bad[k] = v
		}
		bad.Set("tax_code", "123")
		_, _, body = vi.PostFrom("/dashboard/settings", "/dashboard/settings/seller", bad)
		if !strings.Contains(body, "Người bán trên hóa đơn") || !strings.Contains(body, "Mã số thuế không hợp lệ") || strings.Contains(body, "Seller on invoices") {
			t.Errorf("Vietnamese seller form: %s", body)
		}

		// Other roles and CSRF.
		form.Del("csrf") // set by PostFrom
		if status, _, _ := b.Post("/dashboard/settings/seller", form); status != http.StatusForbidden {
			t.Errorf("without CSRF: %d", status)
		}
		acc := e.signedIn(t, "ketoan@saomai.vn")
		if status, _, _ := acc.PostFrom("/dashboard/", "/dashboard/settings/seller", form); status != http.StatusForbidden {
			t.Errorf("Accountant: %d", status)
		}
		// Test mode shows it read-only and refuses a change.
		b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/settings"}})
		_, body = b.Get("/dashboard/settings")
		if !strings.Contains(body, `id="seller-readonly"`) || strings.Contains(body, `id="save-seller"`) || !strings.Contains(body, "0100112437") {
			t.Errorf("test-mode seller: %s", body)
		}
		if status, _, _ := b.PostFrom("/dashboard/settings", "/dashboard/settings/seller", form); status != http.StatusForbidden {
			t.Errorf("test-mode change: %d", status)
		}
		b.PostFrom("/dashboard/settings", "/dashboard/mode", url.Values{"mode": {"live"}, "back": {"/dashboard/settings"}})
		// The other company is untouched.
		oid, _ := parseID(e.other.company)
		if co, err := e.db.Company(context.Background(), oid); err != nil || co.Config.Seller != (recon.Seller{}) {
			t.Errorf("other company's seller: %+v %v", co, err)
		}
	})
}
