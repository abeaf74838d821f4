package apiv2

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/einvoice"
	"recon/internal/testkit"
	"recon/invoices"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// invoiceEnv is a server with the invoice routes over a real database: a
// company with its seller details (series C26TAA), the invoices service
// with the sandbox provider for its test tenant (none for the live one)
// and the real signer, and tokens "admin" (live), "test" (test mode),
// "other" (another company's admin in live mode), "other-test" (its test
// mode), "clerk" (a Member with issue_invoices).
type invoiceEnv struct {
	db    *sqlstore.DB
	auth  tokens
	url   string
	clock *testkit.Clock
	svc   *invoices.Service
}

const sandboxDelay = 10 * time.Second

func newInvoiceEnv(t *testing.T, engine string) *invoiceEnv {
	ctx := context.Background()
	db := dbtest.OpenStore(t, engine)
	co, auth := company(t, db, "SM")
	_, other := company(t, db, "OT")
	auth["other"], auth["other-test"] = other["admin"], other["test"]
	ptr := func(s string) *string { return &s }
	up := recon.SellerUpdate{LegalName: ptr("Công ty TNHH Sao Mai"), TaxCode: ptr("0100112437"), Address: ptr("1 Lê Lợi, Quận 1, TP.HCM"),
		InvoiceSeries: ptr("C26TAA")}
	if _, err := db.UpdateCompany(ctx, co.ID, func(u *recon.Company) error { return up.Apply(&u.Config) }); err != nil {
		t.Fatal(err)
	}
	auth["clerk"] = &recon.Caller{Tenant: auth["test"].Tenant, ClientID: "dashboard", Scopes: recon.Scopes,
		User: &recon.User{ID: 3, Company: co.ID, Role: recon.RoleMember, Permissions: []string{recon.PermIssueInvoices}}}
	clock := testkit.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	svc := &invoices.Service{Store: db, Clock: clock, Test: &invoices.Sandbox{Clock: clock, Delay: sandboxDelay},
		Signer: &einvoice.Signer{Store: db, Clock: clock, Original: db.Invoice}}
	_, srv := server(t, Config{Store: db, Auth: auth, Clock: clock, Invoices: svc, InvoiceLookupURL: "https://recon.example/invoices/lookup"})
	return &invoiceEnv{db: db, auth: auth, url: srv.URL, clock: clock, svc: svc}
}

// call sends a request and decodes the envelope.
func (e *invoiceEnv) call(t *testing.T, method, path, token, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	status, h, b := send(t, method, e.url+path, token, body, headers...)
	return status, h, decodeAnswer(t, b)
}

// answered lets the sandbox answer every pending invoice.
func (e *invoiceEnv) answered(t *testing.T) {
	t.Helper()
	e.clock.Advance(sandboxDelay + time.Second)
	if _, err := e.svc.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

const invoiceItems = `"items":[{"item_name":"Áo thun","unit":"cái","quantity":2,"unit_price":50000,"vat_rate":"10"},
	{"item_name":"Giao hàng","quantity":"1","unit_price":80000,"vat_rate":8}]`

func invoiceBodyWith(extra string) string {
	return `{"buyer":{"name":"Nguyễn Văn A","legal_name":"Công ty ABC","tax_code":"0100112437","address":"Hà Nội","email":"a@abc.vn"},` +
		extra + invoiceItems + `}`
}

func errCode(m map[string]any) string { s, _ := m["error_code"].(string); return s }

// TestInvoiceLifeCycleOverHTTP: create (draft and issued), check by
// tracking code until the sandbox answers, issue a draft, replace, adjust,
// cancel, each refusal a 422 naming the rule, the XML and the PDF, the
// list, and the server's amounts and words.
func TestInvoiceLifeCycleOverHTTP(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newInvoiceEnv(t, engine)

		// Issued at once in test mode: pending, then Success.
		st, _, m := e.call(t, "POST", "/v1/invoices/create", "test", invoiceBodyWith(""))
		if st != http.StatusCreated {
			t.Fatalf("create: %d %v", st, m)
		}
		inv := data(m)
		ref, tracking := inv["reference_code"].(string), inv["tracking_code"].(string)
		if inv["status"] != recon.InvoicePending || tracking == "" || fmt.Sprint(inv["invoice_number"]) != "1" || inv["issued_date"] != "2026-03-02" {
			t.Fatalf("created invoice: %v", inv)
		}
		totals := inv["totals"].(map[string]any)
		// 2 × 50,000 at 10% (10,000 VAT) + 80,000 at 8% (6,400 VAT).
		if fmt.Sprint(totals["total_before_tax"]) != "180000" || fmt.Sprint(totals["vat_total"]) != "16400" || fmt.Sprint(totals["total_amount"]) != "196400" ||
			totals["total_in_words"] != "Một trăm chín mươi sáu nghìn bốn trăm đồng" {
			t.Errorf("totals: %v", totals)
		}
		st, _, m = e.call(t, "GET", "/v1/invoices/create/check/"+tracking, "test", "")
		if st != 200 || data(m)["status"] != invoices.CheckPending {
			t.Fatalf("check before the answer: %d %v", st, m)
		}
		e.answered(t)
		st, _, m = e.call(t, "GET", "/v1/invoices/create/check/"+tracking, "test", "")
		if st != 200 || data(m)["status"] != invoices.CheckSuccess || data(m)["invoice"].(map[string]any)["cqt_code"] == "" {
			t.Fatalf("check after the answer: %d %v", st, m)
		}

		// XML and PDF.
		st, h, b := send(t, "GET", e.url+"/v1/invoices/"+ref+"/xml", "test", "")
		if st != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/xml") || !strings.Contains(b, "<HDon") || !strings.Contains(b, "SignatureValue") {
			t.Errorf("xml: %d %s %.200s", st, h.Get("Content-Type"), b)
		}
		st, h, b = send(t, "GET", e.url+"/v1/invoices/"+ref+"/pdf", "test", "")
		if st != 200 || h.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(b, "%PDF") {
			t.Errorf("pdf: %d %s %.20s", st, h.Get("Content-Type"), b)
		}

		// A draft: no number, no XML, then issued by the clerk.
		st, _, m = e.call(t, "POST", "/v1/invoices/create", "clerk", invoiceBodyWith(`"is_draft":true,`))
		draft := data(m)
		if st != 201 || draft["status"] != recon.InvoiceDraft || draft["invoice_number"] != nil {
			t.Fatalf("draft: %d %v", st, m)
		}
		dref := draft["reference_code"].(string)
		if st, _, m = e.call(t, "GET", "/v1/invoices/"+dref+"/xml", "test", ""); st != 404 {
			t.Errorf("a draft's xml: %d %v", st, m)
		}
		st, _, m = e.call(t, "POST", "/v1/invoices/issue", "clerk", `{"reference_code":"`+dref+`"}`)
		if st != 200 || data(m)["status"] != recon.InvoicePending || fmt.Sprint(data(m)["invoice_number"]) != "2" {
			t.Fatalf("issue: %d %v", st, m)
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/issue", "clerk", `{"reference_code":"`+dref+`"}`); st != 422 || errCode(m) != recon.RuleInvalidState {
			t.Errorf("issue twice: %d %v", st, m)
		}
		// Not issued yet: no replacement.
		if st, _, m = e.call(t, "POST", "/v1/invoices/replace", "test", invoiceBodyWith(`"original_invoice_reference_code":"`+dref+`",`)); st != 422 || errCode(m) != recon.RuleInvoiceNotIssued {
			t.Errorf("replace a pending invoice: %d %v", st, m)
		}
		e.answered(t)

		// Replace the first; then it can be neither replaced, adjusted nor cancelled.
		st, _, m = e.call(t, "POST", "/v1/invoices/replace", "test", invoiceBodyWith(`"original_invoice_reference_code":"`+ref+`",`))
		if st != 201 || data(m)["original_reference_code"] != ref {
			t.Fatalf("replace: %d %v", st, m)
		}
		for _, c := range []struct{ path, body, code string }{
			{"/v1/invoices/replace", invoiceBodyWith(`"original_invoice_reference_code":"` + ref + `",`), recon.RuleInvoiceAlreadyReplaced},
			{"/v1/invoices/adjust", invoiceBodyWith(`"original_invoice_reference_code":"` + ref + `","adjustment_type":"increase",`), recon.RuleInvoiceAlreadyReplaced},
			{"/v1/invoices/cancel", `{"reference_code":"` + ref + `","reason":"sai"}`, recon.RuleInvoiceAlreadyReplaced},
		} {
			if st, _, m = e.call(t, "POST", c.path, "test", c.body); st != 422 || errCode(m) != c.code {
				t.Errorf("%s of a replaced invoice: %d %v, want 422 %s", c.path, st, m, c.code)
			}
		}
		// Adjust the second (twice), then it cannot be cancelled. A bad
		// adjustment type and a missing reason are input errors: 400 with
		// the rule's code (recon's field errors).
		for i := 0; i < 2; i++ {
			st, _, m = e.call(t, "POST", "/v1/invoices/adjust", "test", invoiceBodyWith(`"original_invoice_reference_code":"`+dref+`","adjustment_type":"decrease",`))
			if st != 201 || data(m)["adjustment_type"] != recon.AdjustDecrease {
				t.Fatalf("adjust %d: %d %v", i, st, m)
			}
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/adjust", "test", invoiceBodyWith(`"original_invoice_reference_code":"`+dref+`","adjustment_type":"more",`)); st != 400 || errCode(m) != recon.RuleInvoiceAdjustmentTypeBad {
			t.Errorf("adjust with a bad type: %d %v", st, m)
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/cancel", "test", `{"reference_code":"`+dref+`","reason":"sai"}`); st != 422 || errCode(m) != recon.RuleInvoiceAdjustedNoCancel {
			t.Errorf("cancel an adjusted invoice: %d %v", st, m)
		}
		// Cancel a fresh one: a reason is required; then it is cancelled for good.
		_, _, m = e.call(t, "POST", "/v1/invoices/create", "test", invoiceBodyWith(""))
		cref := data(m)["reference_code"].(string)
		e.answered(t)
		if st, _, m = e.call(t, "POST", "/v1/invoices/cancel", "test", `{"reference_code":"`+cref+`","reason":" "}`); st != 400 || errCode(m) != recon.RuleInvoiceCancelReason {
			t.Errorf("cancel without a reason: %d %v", st, m)
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/cancel", "test", `{"reference_code":"`+cref+`","reason":"Khách trả hàng"}`); st != 200 || data(m)["status"] != recon.InvoiceCancelled {
			t.Fatalf("cancel: %d %v", st, m)
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/cancel", "test", `{"reference_code":"`+cref+`","reason":"again"}`); st != 422 || errCode(m) != recon.RuleInvoiceCancelled {
			t.Errorf("cancel twice: %d %v", st, m)
		}

		// The list: newest first, filtered, paged.
		st, _, m = e.call(t, "GET", "/v1/invoices?per_page=2", "test", "")
		list, _ := m["data"].([]any)
		meta, _ := m["meta"].(map[string]any)
		if st != 200 || len(list) != 2 || fmt.Sprint(meta["total"]) != "6" {
			t.Errorf("list: %d %v", st, m)
		}
		st, _, m = e.call(t, "GET", "/v1/invoices?status=cancelled", "test", "")
		if list, _ = m["data"].([]any); st != 200 || len(list) != 1 || list[0].(map[string]any)["reference_code"] != cref {
			t.Errorf("list cancelled: %d %v", st, m)
		}
		if st, _, m = e.call(t, "GET", "/v1/invoices?status=lost", "test", ""); st != 400 {
			t.Errorf("list with a bad status: %d %v", st, m)
		}
	})
}

// TestInvoiceInputErrors: malformed bodies are 400s naming the field, and
// nothing is written.
func TestInvoiceInputErrors(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newInvoiceEnv(t, engine)
		item := func(s string) string {
			return `{"items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10"` + s + `}]}`
		}
		for _, c := range []struct{ name, body, field string }{
			{"malformed", `{"items":`, ""},
			{"unknown field", `{"itemz":[]}`, "itemz"},
			{"amount is the server's", item(`,"amount":5`), "amount"},
			{"wrong type", `{"items":[{"item_name":"A","quantity":1,"unit_price":"1000","vat_rate":"10"}]}`, "items.unit_price"},
			{"bad rate", `{"items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"7"}]}`, "items[0].vat_rate"},
			{"no items", `{"buyer":{"name":"A"}}`, "items"},
			{"bad quantity", `{"items":[{"item_name":"A","quantity":"abc","unit_price":1000,"vat_rate":"10"}]}`, "items[0].quantity"},
			{"quantity of a wrong type", `{"items":[{"item_name":"A","quantity":true,"unit_price":1000,"vat_rate":"10"}]}`, "items.quantity"},
			{"bad tax code", `{"buyer":{"name":"A","tax_code":"0100112438"},"items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10"}]}`, "buyer.tax_code"},
			{"bad series", `{"invoice_series":"X26TAA","items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10"}]}`, "invoice_series"},
			{"bad template", `{"template_code":"3","items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10"}]}`, "template_code"},
			{"original on create", `{"original_invoice_reference_code":"x","items":[{"item_name":"A","quantity":1,"unit_price":1000,"vat_rate":"10"}]}`, "original_invoice_reference_code"},
		} {
			st, _, m := e.call(t, "POST", "/v1/invoices/create", "test", c.body)
			errs, _ := m["errors"].(map[string]any)
			if st != 400 || errCode(m) != "validation_error" {
				t.Errorf("%s: %d %v, want 400", c.name, st, m)
			} else if c.field != "" && errs[c.field] == nil {
				t.Errorf("%s: errors %v, want one for %s", c.name, errs, c.field)
			}
		}
		for _, c := range []struct{ path, body, field string }{
			{"/v1/invoices/replace", item(""), "original_invoice_reference_code"},
			{"/v1/invoices/issue", `{}`, "reference_code"},
			{"/v1/invoices/issue", `{"reference_code":"x","reason":"y"}`, "reason"},
			{"/v1/invoices/cancel", `{"reference_code":"x","extra":1}`, "extra"},
		} {
			st, _, m := e.call(t, "POST", c.path, "test", c.body)
			errs, _ := m["errors"].(map[string]any)
			if st != 400 || errs[c.field] == nil {
				t.Errorf("%s %s: %d %v, want 400 naming %s", c.path, c.body, st, m, c.field)
			}
		}
		if _, total, err := e.db.Invoices(context.Background(), e.auth["test"].Tenant, recon.InvoiceFilter{Page: 1, PerPage: 10}); err != nil || total != 0 {
			t.Errorf("invoices written by refused requests: %d %v", total, err)
		}
		// No route: the v2 envelope, not the gateway's shape.
		if st, _, m := e.call(t, "GET", "/v1/invoices/x/y/z", "test", ""); st != 404 || m["error_code"] != "not_found" {
			t.Errorf("no route: %d %v", st, m)
		}
	})
}

// TestInvoiceTenantsAndProviders: another company's and the other mode's
// invoices are 404s; a live tenant without a provider drafts but cannot
// issue (422 invoice_provider_unavailable); provider accounts; an
// idempotency key replays a create.
func TestInvoiceTenantsAndProviders(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e := newInvoiceEnv(t, engine)
		st, _, m := e.call(t, "POST", "/v1/invoices/create", "admin", invoiceBodyWith(""))
		if st != 422 || errCode(m) != recon.RuleNoInvoiceProvider {
			t.Errorf("issue live without a provider: %d %v", st, m)
		}
		st, _, m = e.call(t, "POST", "/v1/invoices/create", "admin", invoiceBodyWith(`"is_draft":true,`))
		if st != 201 {
			t.Fatalf("live draft: %d %v", st, m)
		}
		live := data(m)
		ref := live["reference_code"].(string)
		for _, tok := range []string{"test", "other", "other-test"} {
			for _, p := range []string{"/v1/invoices/" + ref, "/v1/invoices/" + ref + "/pdf", "/v1/invoices/create/check/" + live["tracking_code"].(string)} {
				if st, _, m := e.call(t, "GET", p, tok, ""); st != 404 {
					t.Errorf("%s as %s: %d %v, want 404", p, tok, st, m)
				}
			}
			if st, _, m := e.call(t, "POST", "/v1/invoices/issue", tok, `{"reference_code":"`+ref+`"}`); st != 404 {
				t.Errorf("issue as %s: %d %v, want 404", tok, st, m)
			}
			if _, _, m := e.call(t, "GET", "/v1/invoices", tok, ""); fmt.Sprint(m["meta"].(map[string]any)["total"]) != "0" {
				t.Errorf("list as %s: %v", tok, m)
			}
		}
		if st, _, m = e.call(t, "POST", "/v1/invoices/issue", "admin", `{"reference_code":"`+ref+`"}`); st != 422 || errCode(m) != recon.RuleNoInvoiceProvider {
			t.Errorf("issue a live draft: %d %v", st, m)
		}
		st, _, m = e.call(t, "GET", "/v1/provider-accounts", "admin", "")
		if list, _ := m["data"].([]any); st != 200 || len(list) != 0 || m["meta"].(map[string]any)["can_send"] != false {
			t.Errorf("live provider accounts: %d %v", st, m)
		}
		st, _, m = e.call(t, "GET", "/v1/provider-accounts", "test", "")
		if list, _ := m["data"].([]any); st != 200 || len(list) != 1 || list[0].(map[string]any)["provider"] != invoices.SandboxProvider {
			t.Errorf("test provider accounts: %d %v", st, m)
		}

		// Idempotency: the same key and body replay the first answer.
		st1, _, m1 := e.call(t, "POST", "/v1/invoices/create", "test", invoiceBodyWith(""), IdempotencyHeader, "inv-1")
		st2, h2, m2 := e.call(t, "POST", "/v1/invoices/create", "test", invoiceBodyWith(""), IdempotencyHeader, "inv-1")
		if st1 != 201 || st2 != 201 || h2.Get("Idempotent-Replayed") != "true" || data(m1)["reference_code"] != data(m2)["reference_code"] {
			t.Errorf("replay: %d %d %q %v %v", st1, st2, h2.Get("Idempotent-Replayed"), m1, m2)
		}
		if st, _, m := e.call(t, "POST", "/v1/invoices/create", "test", invoiceBodyWith(`"is_draft":true,`), IdempotencyHeader, "inv-1"); st != 409 || errCode(m) != "idempotency_key_reused" {
			t.Errorf("key reused: %d %v", st, m)
		}
		if _, total, _ := e.db.Invoices(context.Background(), e.auth["test"].Tenant, recon.InvoiceFilter{Page: 1, PerPage: 10}); total != 1 {
			t.Errorf("%d test invoices after a replay, want 1", total)
		}
	})
}
