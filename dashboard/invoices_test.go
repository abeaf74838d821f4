package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"recon"
	"recon/dashboard"
	"recon/einvoice"
	"recon/internal/testkit"
	"recon/invoices"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// invoiceEnv is newDashEnv with the e-invoice service as server/routes.go
// gives it (the sandbox provider for the test mode, none for live), on a
// clock the test moves past the sandbox's moment, and the live company's
// seller details.
func invoiceEnv(t *testing.T, engine string) (*dashEnv, *invoices.Service, *testkit.Clock) {
	t.Helper()
	clock := testkit.NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	var svc *invoices.Service
	e := newDashEnv(t, engine, func(h *dashboard.Handler) {
		db := h.Store.(*sqlstore.DB)
		svc = &invoices.Service{Store: db, Clock: clock, Location: h.Location, Test: &invoices.Sandbox{Clock: clock},
			Signer: &einvoice.Signer{Store: db, Clock: clock, Original: db.Invoice}}
		h.Invoices = svc
	})
	p := func(s string) *string { return &s }
	up := recon.SellerUpdate{LegalName: p("Công ty TNHH Sao Mai"), TaxCode: p("0100112437"), Address: p("1 Lê Lợi, Quận 1, TP.HCM"),
		InvoiceSeries: p("C26TAA")}
	for _, m := range []*tenant{e.live, e.other} {
		if _, err := e.db.UpdateCompany(context.Background(), m.id.ID(), func(c *recon.Company) error { return up.Apply(&c.Config) }); err != nil {
			t.Fatal(err)
		}
	}
	return e, svc, clock
}

// issueIssued makes an issued invoice of the tenant through the service:
// sent to the sandbox, answered after its moment.
func issueIssued(t *testing.T, svc *invoices.Service, clock *testkit.Clock, c *recon.Caller, orig string, req invoices.Request) *recon.Invoice {
	t.Helper()
	ctx := context.Background()
	var inv *recon.Invoice
	var err error
	if orig == "" {
		inv, err = svc.Create(ctx, c, req)
	} else {
		inv, err = svc.Replace(ctx, c, orig, req)
	}
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := svc.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	if inv, err = svc.Get(ctx, c, inv.ReferenceCode); err != nil || inv.Status != recon.InvoiceIssued {
		t.Fatalf("invoice %v not issued: %v", inv, err)
	}
	return inv
}

func invoiceRequest(name string) invoices.Request {
	return invoices.Request{
		Buyer: recon.Buyer{Name: "Nguyễn Văn A", LegalName: "Công ty Cổ phần Bình Minh", TaxCode: "0100109106", Address: "Hà Nội"},
		Items: []recon.InvoiceItem{{LineType: recon.LineGoods, ItemName: name, Unit: "cái", Quantity: "2", UnitPrice: 50000, VATRate: recon.VAT10}},
	}
}

// TestDashboardInvoicePages: the e-invoices in the dashboard, on a real
// server, both engines, in the test mode (the sandbox provider): the list
// (status filter, newest first) and its nav link; an invoice's page with the
// seller, buyer, lines, totals and words, its lookup code, PDF and XML
// served for the session's tenant, no edit action; its history after a
// replacement made through the service (links both ways); another
// company's and the live mode's reference codes 404; a Member without
// permission refused.
func TestDashboardInvoicePages(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e, svc, clock := invoiceEnv(t, engine)
		c := &recon.Caller{Tenant: e.test.id}
		orig := issueIssued(t, svc, clock, c, "", invoiceRequest("Áo thun"))
		repl := issueIssued(t, svc, clock, c, orig.ReferenceCode, invoiceRequest("Áo thun xanh"))
		draft, err := svc.Create(context.Background(), c, invoices.Request{IsDraft: true, Buyer: recon.Buyer{Name: "Khách lẻ"},
			Items: []recon.InvoiceItem{{LineType: recon.LineGoods, ItemName: "Sách", Unit: "quyển", Quantity: "1", UnitPrice: 80000, VATRate: recon.VAT5}}})
		if err != nil {
			t.Fatal(err)
		}
		// The live mode's invoice, a draft (no provider there).
		liveInv, err := svc.Create(context.Background(), &recon.Caller{Tenant: e.live.id}, invoices.Request{IsDraft: true, Buyer: recon.Buyer{Name: "Live"},
			Items: []recon.InvoiceItem{{LineType: recon.LineGoods, ItemName: "Bút", Unit: "cái", Quantity: "1", UnitPrice: 1000, VATRate: recon.VAT10}}})
		if err != nil {
			t.Fatal(err)
		}

		boss := e.signedIn(t, "boss@saomai.vn")
		if st, body := boss.Get("/dashboard/invoices"); st != http.StatusOK || strings.Contains(body, orig.ReferenceCode) || !strings.Contains(body, liveInv.ReferenceCode) || !strings.Contains(body, `id="nav-invoices"`) {
			t.Fatalf("live list: %d %s", st, body)
		}
		if st, _ := boss.Get("/dashboard/invoices/" + orig.ReferenceCode); st != http.StatusNotFound {
			t.Errorf("the test mode's invoice from live: %d, want 404", st)
		}
		if st, _, _ := boss.PostFrom("/dashboard/transactions", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/transactions"}}); st != http.StatusSeeOther {
			t.Fatalf("to test mode: %d", st)
		}

		st, body := boss.Get("/dashboard/invoices")
		if st != http.StatusOK {
			t.Fatalf("list: %d %s", st, body)
		}
		iDraft, iRepl, iOrig := strings.Index(body, draft.ReferenceCode), strings.Index(body, repl.ReferenceCode), strings.Index(body, orig.ReferenceCode)
		if iDraft < 0 || iRepl < 0 || iOrig < 0 || !(iDraft < iRepl && iRepl < iOrig) || strings.Contains(body, liveInv.ReferenceCode) {
			t.Errorf("list not newest first or wrong tenant (%d %d %d): %s", iDraft, iRepl, iOrig, body)
		}
		if _, body := boss.Get("/dashboard/invoices?status=replaced"); !strings.Contains(body, orig.ReferenceCode) || strings.Contains(body, repl.ReferenceCode) || strings.Contains(body, draft.ReferenceCode) {
			t.Errorf("status filter: %s", body)
		}
		if st, body := boss.Get("/dashboard/invoices?status=paid"); st != http.StatusBadRequest || !strings.Contains(body, `id="filter-error"`) {
			t.Errorf("unknown status: %d %s", st, body)
		}

		// The original: replaced, linking to its replacement.
		st, body = boss.Get("/dashboard/invoices/" + orig.ReferenceCode)
		for _, w := range []string{"Công ty TNHH Sao Mai", "0100112437", "Công ty Cổ phần Bình Minh", "Áo thun", orig.Totals.TotalInWords,
			orig.LookupCode, `id="pdf-link"`, `id="xml-link"`, `/dashboard/invoices/` + repl.ReferenceCode, "C26TAA"} {
			if st != http.StatusOK || !strings.Contains(body, w) {
				t.Errorf("original's page lacks %q (%d): %s", w, st, body)
			}
		}
		if strings.Contains(body, `method="post"`) && strings.Contains(body, "/edit") {
			t.Errorf("an issued invoice shows an edit action: %s", body)
		}
		// The replacement: links back to the original.
		if _, body := boss.Get("/dashboard/invoices/" + repl.ReferenceCode); !strings.Contains(body, `id="original-link"`) || !strings.Contains(body, "/dashboard/invoices/"+orig.ReferenceCode) {
			t.Errorf("replacement's page lacks the original: %s", body)
		}
		// PDF and XML for the session's tenant; a draft has no XML.
		if resp, body := boss.Do("GET", "/dashboard/invoices/"+repl.ReferenceCode+"/pdf", nil, nil); resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "%PDF") {
			t.Errorf("pdf: %d %.40q", resp.StatusCode, body)
		}
		if resp, body := boss.Do("GET", "/dashboard/invoices/"+repl.ReferenceCode+"/xml", nil, nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "<HDon") || !strings.Contains(body, "Signature") {
			t.Errorf("xml: %d %.200q", resp.StatusCode, body)
		}
		if st, _ := boss.Get("/dashboard/invoices/" + draft.ReferenceCode + "/xml"); st != http.StatusNotFound {
			t.Errorf("a draft's xml: %d, want 404", st)
		}
		// Another company's reference is 404, as are its PDF and XML.
		other, err := svc.Create(context.Background(), &recon.Caller{Tenant: e.other.id}, invoices.Request{IsDraft: true, Buyer: recon.Buyer{Name: "Khác"},
			Items: []recon.InvoiceItem{{LineType: recon.LineGoods, ItemName: "Bút", Unit: "cái", Quantity: "1", UnitPrice: 1000, VATRate: recon.VAT10}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"", "/pdf", "/xml"} {
			if st, _ := boss.Get("/dashboard/invoices/" + other.ReferenceCode + p); st != http.StatusNotFound {
				t.Errorf("another company's invoice%s: %d, want 404", p, st)
			}
		}
		// In Vietnamese, no English text of the invoices' messages on their
		// pages (i18n_invoices.go; the page's main part).
		boss.Lang = "vi"
		for _, p := range []string{"/dashboard/invoices", "/dashboard/invoices?status=bogus", "/dashboard/invoices/" + orig.ReferenceCode,
			"/dashboard/invoices/" + repl.ReferenceCode, "/dashboard/invoices/" + draft.ReferenceCode} {
			status, body := boss.Get(p)
			main, _, _ := strings.Cut(body[strings.Index(body, `<main`):], "</main>")
			if status >= 500 || !strings.Contains(main, "</h1>") {
				t.Errorf("GET %s in Vietnamese: %d", p, status)
			}
			for _, en := range dashboard.InvoiceEnglish() {
				if strings.Contains(main, en) {
					t.Errorf("%s in Vietnamese shows %q", p, en)
				}
			}
			if !strings.Contains(main, "Hóa đơn điện tử") {
				t.Errorf("%s in Vietnamese lacks its title", p)
			}
		}
		boss.Lang = "en"
		// A Member without permission is refused.
		member := e.signedIn(t, "nhanvien@saomai.vn")
		for _, p := range []string{"/dashboard/invoices", "/dashboard/invoices/" + liveInv.ReferenceCode, "/dashboard/invoices/" + liveInv.ReferenceCode + "/pdf"} {
			if st, _ := member.Get(p); st != http.StatusForbidden {
				t.Errorf("member %s: %d, want 403", p, st)
			}
		}
		if _, body := member.Get("/dashboard/"); strings.Contains(body, `id="nav-invoices"`) {
			t.Error("a member sees the invoices link")
		}
	})
}

// TestDashboardInvoiceOrder: a paid order's page lists its invoices and
// shows the issue button (not an unpaid order's); the button leads to a
// confirmation that writes nothing until confirmed; confirmed in the test
// mode (sandbox provider) the invoice is issued from the order and the
// browser lands on its page; in live mode without a provider, and with the
// seller's details incomplete, the refusal says so in English and
// Vietnamese; a Member without permission is
// refused. Both engines, real HTTP.
func TestDashboardInvoiceOrder(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		e, svc, _ := invoiceEnv(t, engine)
		ctx := context.Background()
		boss := e.signedIn(t, "boss@saomai.vn")
		if _, body := boss.Get("/dashboard/order?invoice=INV-PAID"); !strings.Contains(body, `id="issue-invoice"`) || !strings.Contains(body, `id="order-invoices"`) {
			t.Errorf("the paid order lacks the issue button: %s", body)
		}
		if _, body := boss.Get("/dashboard/order?invoice=INV-OPEN"); strings.Contains(body, `id="issue-invoice"`) {
			t.Errorf("an unpaid order shows the issue button: %s", body)
		}
		if st, _ := boss.Get("/dashboard/order/invoice?invoice=INV-OPEN"); st != http.StatusConflict {
			t.Errorf("issuing an unpaid order's invoice: %d, want 409", st)
		}
		// A POST without the confirmation shows it and writes nothing.
		if st, _, body := boss.PostFrom("/dashboard/order?invoice=INV-PAID", "/dashboard/order/invoice", url.Values{"invoice": {"INV-PAID"}}); st != http.StatusOK || !strings.Contains(body, `id="confirm-button"`) {
			t.Errorf("unconfirmed POST: %d %s", st, body)
		}
		if _, n, err := svc.List(ctx, &recon.Caller{Tenant: e.live.id}, recon.InvoiceFilter{}); err != nil || n != 0 {
			t.Fatalf("the confirmation wrote %d invoices (%v)", n, err)
		}
		// Live, no provider: refused in both languages.
		st, _, body := boss.Confirm("/dashboard/order/invoice?invoice=INV-PAID")
		if st != http.StatusUnprocessableEntity || !strings.Contains(body, "can be drafted and exported but not sent") {
			t.Errorf("live without a provider: %d %s", st, body)
		}
		boss.Lang = "vi"
		if st, _, body := boss.Confirm("/dashboard/order/invoice?invoice=INV-PAID"); st != http.StatusUnprocessableEntity || !strings.Contains(body, "hóa đơn chỉ có thể lập nháp và xuất ra, chưa thể gửi") {
			t.Errorf("live without a provider, in Vietnamese: %d %s", st, body)
		}
		boss.Lang = "en"

		// The test mode: the sandbox issues it.
		code := e.checkout(t, e.test, "TEST-PAID", 200000, "Thanh toán đơn hàng TEST-PAID")
		e.pay(t, e.test, code, 200000)
		if st, _, _ := boss.PostFrom("/dashboard/transactions", "/dashboard/mode", url.Values{"mode": {"test"}, "back": {"/dashboard/transactions"}}); st != http.StatusSeeOther {
			t.Fatalf("to test mode: %d", st)
		}
		if _, body := boss.Get("/dashboard/order?invoice=TEST-PAID"); !strings.Contains(body, `id="issue-invoice"`) {
			t.Fatalf("the test mode's paid order lacks the button: %s", body)
		}
		st, loc, body := boss.Confirm("/dashboard/order/invoice?invoice=TEST-PAID")
		if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/dashboard/invoices/") {
			t.Fatalf("issue: %d %q %s", st, loc, body)
		}
		ref := strings.TrimPrefix(loc, "/dashboard/invoices/")
		inv, err := svc.Get(ctx, &recon.Caller{Tenant: e.test.id}, ref)
		if err != nil || inv.Number != 1 || inv.Status != recon.InvoicePending || inv.Totals.TotalAmount != 200000 {
			t.Fatalf("the issued invoice: %+v %v", inv, err)
		}
		if st, body := boss.Get(loc); st != http.StatusOK || !strings.Contains(body, `id="order-link"`) || !strings.Contains(body, "TEST-PAID") {
			t.Errorf("the invoice's page: %d %s", st, body)
		}
		if _, body := boss.Get("/dashboard/order?invoice=TEST-PAID"); !strings.Contains(body, "/dashboard/invoices/"+ref) {
			t.Errorf("the order's page lacks its invoice: %s", body)
		}
		// The seller's details incomplete: refused in both languages.
		if _, err := e.db.UpdateCompany(ctx, e.live.id.ID(), func(c *recon.Company) error { c.Config.Seller.TaxCode = ""; return nil }); err != nil {
			t.Fatal(err)
		}
		e.pay(t, e.test, e.checkout(t, e.test, "TEST-PAID-2", 50000, "Thanh toán đơn hàng TEST-PAID-2"), 50000)
		if st, _, body := boss.Confirm("/dashboard/order/invoice?invoice=TEST-PAID-2"); st != http.StatusUnprocessableEntity || !strings.Contains(body, "legal details are incomplete") {
			t.Errorf("incomplete seller: %d %s", st, body)
		}
		boss.Lang = "vi"
		if st, _, body := boss.Confirm("/dashboard/order/invoice?invoice=TEST-PAID-2"); st != http.StatusUnprocessableEntity || !strings.Contains(body, "Thông tin người bán chưa đủ") {
			t.Errorf("incomplete seller, in Vietnamese: %d %s", st, body)
		}
		boss.Lang = "en"
		// Another company's order is 404.
		if st, _ := boss.Get("/dashboard/order/invoice?invoice=INV-OTHER"); st != http.StatusNotFound {
			t.Errorf("another company's order: %d, want 404", st)
		}
		// A Member without permission: no section, refused.
		member := e.signedIn(t, "nhanvien@saomai.vn")
		if st, _ := member.Get("/dashboard/order/invoice?invoice=INV-PAID"); st != http.StatusForbidden {
			t.Errorf("member GET: %d, want 403", st)
		}
		if st, _, _ := member.PostFrom("/dashboard/", "/dashboard/order/invoice", url.Values{"invoice": {"INV-PAID"}, "confirm": {"yes"}}); st != http.StatusForbidden {
			t.Errorf("member POST: %d, want 403", st)
		}
	})
}
