package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"recon"
	"recon/internal/testkit"
)

// The e-invoice routes in the cross-mode test (docs/invoices.md, API):
// each mode's token reaches its own mode's invoices only, the other mode's
// reference and tracking codes are 404s, and only the test mode has a
// provider (the sandbox).

// invoiceSide is a mode's invoice data: a token with the invoice scopes, an
// invoice and its tracking code.
type invoiceSide struct {
	token, ref, tracking string
}

var invoiceSides sync.Map // *modeData → map[bool]*invoiceSide (by live)

const invoiceCrossBody = `{"buyer":{"name":"Nguyễn Văn A"},"items":[{"item_name":"Áo thun","quantity":1,"unit_price":100000,"vat_rate":"10"}]}`

// withSeller runs fn with the company's seller details set, and puts back
// what was there (the PATCH /api/v1/company case checks it starts empty).
func withSeller(t *testing.T, md *modeData, fn func()) {
	t.Helper()
	ctx := context.Background()
	co, err := md.db.Company(ctx, md.company)
	if err != nil {
		t.Fatal(err)
	}
	old := co.Config
	s := func(v string) *string { return &v }
	up := recon.SellerUpdate{LegalName: s("Công ty TNHH Hải Chè Đỗ"), TaxCode: s("0100112437"), Address: s("12 Lý Thường Kiệt, Hà Nội"), InvoiceSeries: s("C26TAA")}
	if _, err := md.db.UpdateCompany(ctx, md.company, func(c *recon.Company) error { return up.Apply(&c.Config) }); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := md.db.UpdateCompany(ctx, md.company, func(c *recon.Company) error {
			c.Config.Seller, c.Config.Invoicing = old.Seller, old.Invoicing
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}()
	fn()
}

// invoices returns the mode's invoice data, made on first use: a live
// draft (the live mode has no provider) and a test invoice sent to the
// sandbox.
func (md *modeData) invoices(t *testing.T, s *side) *invoiceSide {
	t.Helper()
	if v, ok := invoiceSides.Load(md); ok {
		return v.(map[bool]*invoiceSide)[s.live]
	}
	sides := map[bool]*invoiceSide{}
	withSeller(t, md, func() {
		for _, me := range []*side{md.live, md.test} {
			flag := []string{}
			body := invoiceCrossBody
			if !me.live {
				flag = []string{"--test"}
			} else {
				body = `{"is_draft":true,` + invoiceCrossBody[1:]
			}
			id := cliJSON(t, md.dbURL, append([]string{"client", "create", "--company", fmt.Sprint(md.company), "--name", "invoices " + me.name, "--scopes", "invoice:read invoice:write"}, flag...)...)["client_id"].(string)
			tok := cliJSON(t, md.dbURL, "token", "issue", "--client", id, "--user", "admin@haichedo.vn", "--scopes", "invoice:read invoice:write")["access_token"].(string)
			status, b := testkit.Call(t, "POST", md.base+"/v1/invoices/create", tok, body)
			d, _ := b["data"].(map[string]any)
			if status != 201 {
				t.Fatalf("%s invoice: %d %v", me.name, status, b)
			}
			sides[me.live] = &invoiceSide{token: tok, ref: d["reference_code"].(string), tracking: d["tracking_code"].(string)}
		}
	})
	invoiceSides.Store(md, sides)
	return sides[s.live]
}

func (md *modeData) invoiceCall(t *testing.T, s *side, method, path, body string) (int, map[string]any) {
	t.Helper()
	return testkit.Call(t, method, md.base+path, md.invoices(t, s).token, body)
}

// ownAndOther checks that path (made of a side's invoice data) answers
// want to its own mode and 404 to the other.
func ownAndOther(t *testing.T, md *modeData, method string, path func(*invoiceSide) string, body string, want func(me *side) int) {
	t.Helper()
	md.cross(func(me, other *side) {
		p := path(md.invoices(t, me))
		if status, b := md.invoiceCall(t, other, method, p, body); status != http.StatusNotFound {
			t.Errorf("%s %s of %s's invoice as %s: %d %v, want 404", method, p, me.name, other.name, status, b)
		}
		if want != nil {
			if status, b := md.invoiceCall(t, me, method, p, body); status != want(me) {
				t.Errorf("%s %s as %s: %d %v, want %d", method, p, me.name, status, b, want(me))
			}
		}
	})
}

func init() {
	ok := func(*side) int { return 200 }
	for p, c := range map[string]func(t *testing.T, md *modeData){
		"GET /v1/invoices": func(t *testing.T, md *modeData) {
			md.cross(func(me, _ *side) {
				status, b := md.invoiceCall(t, me, "GET", "/v1/invoices", "")
				l, _ := b["data"].([]any)
				if status != 200 || len(l) != 1 || l[0].(map[string]any)["reference_code"] != md.invoices(t, me).ref {
					t.Errorf("%s lists %d %v", me.name, status, b)
				}
			})
		},
		"GET /v1/invoices/{reference_code}": func(t *testing.T, md *modeData) {
			ownAndOther(t, md, "GET", func(s *invoiceSide) string { return "/v1/invoices/" + s.ref }, "", ok)
		},
		"GET /v1/invoices/{reference_code}/pdf": func(t *testing.T, md *modeData) {
			status, _ := md.invoiceCall(t, md.live, "GET", "/v1/invoices/"+md.invoices(t, md.test).ref+"/pdf", "")
			if status != 404 {
				t.Errorf("live reads the test PDF: %d", status)
			}
			status, _ = md.invoiceCall(t, md.test, "GET", "/v1/invoices/"+md.invoices(t, md.live).ref+"/pdf", "")
			if status != 404 {
				t.Errorf("test reads the live PDF: %d", status)
			}
		},
		"GET /v1/invoices/{reference_code}/xml": func(t *testing.T, md *modeData) {
			status, _ := md.invoiceCall(t, md.live, "GET", "/v1/invoices/"+md.invoices(t, md.test).ref+"/xml", "")
			if status != 404 {
				t.Errorf("live reads the test XML: %d", status)
			}
		},
		"GET /v1/invoices/create/check/{tracking_code}": func(t *testing.T, md *modeData) {
			ownAndOther(t, md, "GET", func(s *invoiceSide) string { return "/v1/invoices/create/check/" + s.tracking }, "", ok)
		},
		"GET /v1/provider-accounts": func(t *testing.T, md *modeData) {
			md.cross(func(me, _ *side) {
				status, b := md.invoiceCall(t, me, "GET", "/v1/provider-accounts", "")
				l, _ := b["data"].([]any)
				if status != 200 || (me.live && len(l) != 0) || (!me.live && len(l) != 1) {
					t.Errorf("%s's provider accounts: %d %v", me.name, status, b)
				}
			})
		},
		"POST /v1/invoices/create": func(t *testing.T, md *modeData) {
			withSeller(t, md, func() {
				if status, b := md.invoiceCall(t, md.live, "POST", "/v1/invoices/create", invoiceCrossBody); status != 422 || b["error_code"] != recon.RuleNoInvoiceProvider {
					t.Errorf("live issue: %d %v, want 422 %s", status, b, recon.RuleNoInvoiceProvider)
				}
			})
		},
		"POST /v1/invoices/issue": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				body := fmt.Sprintf(`{"reference_code":%q}`, md.invoices(t, me).ref)
				if status, b := md.invoiceCall(t, other, "POST", "/v1/invoices/issue", body); status != 404 {
					t.Errorf("%s issues %s's invoice: %d %v", other.name, me.name, status, b)
				}
			})
		},
		"POST /v1/invoices/replace": func(t *testing.T, md *modeData) { crossCorrect(t, md, "replace", "") },
		"POST /v1/invoices/adjust":  func(t *testing.T, md *modeData) { crossCorrect(t, md, "adjust", `"adjustment_type":"increase",`) },
		"POST /v1/invoices/cancel": func(t *testing.T, md *modeData) {
			md.cross(func(me, other *side) {
				body := fmt.Sprintf(`{"reference_code":%q,"reason":"sai"}`, md.invoices(t, me).ref)
				if status, b := md.invoiceCall(t, other, "POST", "/v1/invoices/cancel", body); status != 404 {
					t.Errorf("%s cancels %s's invoice: %d %v", other.name, me.name, status, b)
				}
			})
		},
	} {
		crossModeCases[p] = c
	}
}

// crossCorrect: a replacement or adjustment naming the other mode's invoice
// is a 404.
func crossCorrect(t *testing.T, md *modeData, action, extra string) {
	t.Helper()
	withSeller(t, md, func() {
		md.cross(func(me, other *side) {
			body := fmt.Sprintf(`{"original_invoice_reference_code":%q,%s`, md.invoices(t, me).ref, extra) + invoiceCrossBody[1:]
			if status, b := md.invoiceCall(t, other, "POST", "/v1/invoices/"+action, body); status != 404 {
				t.Errorf("%s %ss %s's invoice: %d %v", other.name, action, me.name, status, b)
			}
		})
	})
}
