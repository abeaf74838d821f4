package main

import (
	"fmt"
	"recon"
	"recon/sqlstore"
	"slices"
	"strconv"
	"strings"
	"testing"

	"recon/sqlstore/dbtest"
)

// TestCompanyUpdateSeller: `recon company update ID --tax-code … --legal-name
// … --address …` sets the seller of the company's invoices (docs/invoices.md,
// The seller), on both engines; a refusal names the field and changes
// nothing; the other company is untouched.
func TestCompanyUpdateSeller(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		dbURL := dbtest.NewMigratedURL(t, engine)
		a := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty A", "--short-name", "A")["id"])
		b := fmt.Sprint(cliJSON(t, dbURL, "company", "create", "--full-name", "Công ty B", "--short-name", "B")["id"])
		got := cliJSON(t, dbURL, "company", "update", a, "--tax-code", "0101248141001", "--legal-name", "Công ty Cổ phần A",
			"--address", "17 Duy Tân, Cầu Giấy, Hà Nội", "--email", "hoadon@a.vn", "--invoice-series", "C26TAB", "--auto-invoice")
		wantSeller := map[string]any{"legal_name": "Công ty Cổ phần A", "tax_code": "0101248141-001", "address": "17 Duy Tân, Cầu Giấy, Hà Nội",
			"phone": "", "email": "hoadon@a.vn", "bank_name": "", "bank_account": ""}
		wantInvoicing := map[string]any{"invoice_template": "1", "invoice_series": "C26TAB", "auto_invoice": true}
		if fmt.Sprint(got["seller"]) != fmt.Sprint(wantSeller) || fmt.Sprint(got["invoicing"]) != fmt.Sprint(wantInvoicing) {
			t.Fatalf("update: seller %v invoicing %v", got["seller"], got["invoicing"])
		}
		got = cliJSON(t, dbURL, "company", "update", a, "--from-json", `{"invoice_template":"2","bank_account":"0011004123456","status":"active"}`)
		wantSeller["bank_account"], wantInvoicing["invoice_template"] = "0011004123456", "2"
		if fmt.Sprint(got["seller"]) != fmt.Sprint(wantSeller) || fmt.Sprint(got["invoicing"]) != fmt.Sprint(wantInvoicing) {
			t.Fatalf("update --from-json: seller %v invoicing %v", got["seller"], got["invoicing"])
		}
		out, err := cli(t, dbURL, "company", "show", a)
		if err != nil || !strings.Contains(out, "tax_code:") || !strings.Contains(out, "0101248141-001") || !strings.Contains(out, "C26TAB") {
			t.Fatalf("show (text): %v\n%s", err, out)
		}
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--tax-code", "0101248142"}, "tax_code: tax code 0101248142 has a wrong check digit (its last digit)"},
			{[]string{"--tax-code", "12345"}, "tax_code: a tax code has 10 digits, or 13 for a branch (0123456789-001)"},
			{[]string{"--invoice-series", "C26QAA"}, `invoice_series: series "C26QAA": its 4th character is a type letter: one of T, D, L, M, N, B, G, H, X (a series looks like C26TAA: C or K, two digits of the year, a type letter, two letters)`},
			{[]string{"--invoice-template", "5"}, `invoice_template must be "1" (VAT invoice) or "2" (sales invoice)`},
			{[]string{"--address", ""}, "auto_invoice needs the seller's address first"},
			{[]string{"--from-json", `{"tax_code":1}`}, "--from-json: tax_code must be a string, not number"},
		} {
			_, err := cli(t, dbURL, append([]string{"company", "update", a}, tt.args...)...)
			if err == nil || err.Error() != tt.want {
				t.Errorf("update %v: got error %v, want %q", tt.args, err, tt.want)
			}
		}
		if after := cliJSON(t, dbURL, "company", "show", a); fmt.Sprint(after) != fmt.Sprint(got) {
			t.Fatalf("refused updates changed the company:\n got %v\nwant %v", after, got)
		}
		if other := cliJSON(t, dbURL, "company", "show", b); other["seller"].(map[string]any)["tax_code"] != "" {
			t.Fatalf("other company: %v", other["seller"])
		}
		// The audit log: the two updates that were made, by the operator at
		// the command line, before and after; none of the refused ones.
		db, err := sqlstore.Open(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		id, _ := strconv.ParseInt(a, 10, 64)
		entries, total, err := db.AuditEntries(t.Context(), recon.LiveTenant(id), recon.AuditFilter{Page: 1, PerPage: 10})
		if err != nil || total != 2 {
			t.Fatalf("audit: %d %v", total, err)
		}
		if e := entries[0]; e.Action != recon.AuditCompanyUpdate || e.Actor.Via != recon.AuditViaCLI ||
			!slices.Contains(e.Changes, recon.AuditChange{Field: "invoice_template", Before: "1", After: "2"}) {
			t.Errorf("the second update's entry: %+v", e)
		}
		if e := entries[1]; !slices.Contains(e.Changes, recon.AuditChange{Field: "seller_tax_code", After: "0101248141-001"}) {
			t.Errorf("the first update's entry: %+v", e)
		}
	})
}
