package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"recon"
)

// testInvoices checks the storage of e-invoices (docs/invoices.md,
// Numbering; The life cycle; Providers; From the order).
func testInvoices(t *testing.T, open Open) {
	run(t, "DraftAndIssue", withInvoiceFixture(open), testInvoicesDraftAndIssue)
	run(t, "NumberingKeys", withInvoiceFixture(open), testInvoicesNumberingKeys)
	run(t, "Answer", withInvoiceFixture(open), testInvoicesAnswer)
	run(t, "Replace", withInvoiceFixture(open), testInvoicesReplace)
	run(t, "Adjust", withInvoiceFixture(open), testInvoicesAdjust)
	run(t, "Cancel", withInvoiceFixture(open), testInvoicesCancel)
	run(t, "Read", withInvoiceFixture(open), testInvoicesRead)
	run(t, "Tenants", withInvoiceFixture(open), testInvoicesTenants)
	run(t, "List", withInvoiceFixture(open), testInvoicesList)
	run(t, "XML", withInvoiceFixture(open), testInvoicesXML)
	run(t, "PaidOrderQueue", withInvoiceFixture(open), testInvoicesPaidOrderQueue)
	run(t, "ConcurrentIssues", withInvoiceFixture(open), testInvoicesConcurrentIssues)
	run(t, "ConcurrentCorrections", withInvoiceFixture(open), testInvoicesConcurrentCorrections)
}

var invoiceAt = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// invoiceFixture is a company with an IPN target subscribing to the
// invoice notifications.
type invoiceFixture struct {
	s recon.Store
	c *recon.Company
}

func withInvoiceFixture(open Open) func(t *testing.T) *invoiceFixture {
	return func(t *testing.T) *invoiceFixture {
		s := open(t)
		c := newCompany(t, s, 1)
		if err := s.SetIPN(t.Context(), c.Tenant(), &recon.Target{URL: "https://shop.example.vn/ipn", AuthType: recon.AuthNone, Active: true}); err != nil {
			t.Fatal(err)
		}
		subscribe(t, s, c.Tenant(), recon.IPNOrderPaid, recon.IPNInvoiceIssued, recon.IPNInvoiceFailed)
		return &invoiceFixture{s: s, c: c}
	}
}

// sampleInvoice is an invoice's content as the service gives it (amounts
// computed), series C26TAA, dated invoiceAt.
func sampleInvoice(name string) *recon.Invoice {
	return &recon.Invoice{
		TemplateCode: recon.InvoiceTemplateVAT, Series: "C26TAA", IssuedDate: invoiceAt,
		Currency: "VND", ExchangeRate: "1", PaymentMethod: "TM/CK",
		Seller: recon.Seller{LegalName: "Công ty TNHH Sao Mai", TaxCode: "0312345678", Address: "1 Lê Lợi, Quận 1, TP.HCM"},
		Buyer:  recon.Buyer{Name: name, LegalName: "Công ty " + name, TaxCode: "0100109106", Address: "Hà Nội", Email: "ketoan@example.vn"},
		Items: []recon.InvoiceItem{{LineNumber: 1, LineType: recon.LineGoods, ItemName: "Áo thun", Unit: "cái", Quantity: "2",
			UnitPrice: 50000, VATRate: recon.VAT10, Amount: 100000, VATAmount: 10000}},
		Totals: recon.InvoiceTotals{TotalBeforeTax: 100000, ByRate: []recon.RateTotal{{VATRate: recon.VAT10, Amount: 100000, VATAmount: 10000}},
			VATTotal: 10000, TotalAmount: 110000, TotalInWords: "Một trăm mười nghìn đồng"},
	}
}

func issueInvoice(t *testing.T, s recon.Store, tenant recon.TenantID, inv *recon.Invoice) *recon.Invoice {
	t.Helper()
	out, err := s.CreateInvoice(t.Context(), tenant, inv, true, "sandbox", invoiceAt)
	if err != nil {
		t.Fatalf("CreateInvoice: %v", err)
	}
	return out
}

// issuedInvoice is an invoice issued and accepted (status issued).
func issuedInvoice(t *testing.T, s recon.Store, tenant recon.TenantID, name string) *recon.Invoice {
	t.Helper()
	inv := issueInvoice(t, s, tenant, sampleInvoice(name))
	out, err := s.RecordInvoiceAnswer(t.Context(), tenant, inv.ReferenceCode, recon.InvoiceAnswer{CQTCode: "CQT-" + name}, invoiceAt)
	if err != nil {
		t.Fatalf("RecordInvoiceAnswer: %v", err)
	}
	return out
}

func wantInvoiceRule(t *testing.T, what string, err error, rule string) {
	t.Helper()
	if recon.ErrorCode(err) != recon.EUNPROCESSABLE || recon.ErrorReason(err) != rule {
		t.Fatalf("%s: got %v, want the rule %s", what, err, rule)
	}
}

func mustInvoice(t *testing.T, s recon.Store, tenant recon.TenantID, ref string) *recon.Invoice {
	t.Helper()
	inv, err := s.Invoice(t.Context(), tenant, ref)
	if err != nil {
		t.Fatalf("Invoice(%s): %v", ref, err)
	}
	return inv
}

func testInvoicesDraftAndIssue(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	in := sampleInvoice("A")
	in.IssuedDate = time.Time{}
	draft, err := f.s.CreateInvoice(ctx, tenant, in, false, "sandbox", invoiceAt)
	if err != nil {
		t.Fatal(err)
	}
	if draft.Status != recon.InvoiceDraft || draft.Number != 0 || !recon.ValidXID(draft.ReferenceCode) || !recon.ValidXID(draft.TrackingCode) ||
		len(draft.LookupCode) != recon.InvoiceLookupLen || draft.ReferenceCode == draft.TrackingCode {
		t.Fatalf("draft: %+v", draft)
	}
	got := mustInvoice(t, f.s, tenant, draft.ReferenceCode)
	diff(t, "the stored draft", draft, got)
	// Issued with a number when created to issue.
	first := issueInvoice(t, f.s, tenant, sampleInvoice("B"))
	if first.Status != recon.InvoicePending || first.Number != 1 {
		t.Fatalf("issued: status %s number %d, want pending 1", first.Status, first.Number)
	}
	// Issuing the draft takes the next number.
	issued, err := f.s.IssueInvoice(ctx, tenant, draft.ReferenceCode, invoiceAt, "sandbox", invoiceAt.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if issued.Number != 2 || issued.Status != recon.InvoicePending || !issued.IssuedDate.Equal(invoiceAt) {
		t.Fatalf("issued draft: %+v", issued)
	}
	diff(t, "the issued draft as stored", issued, mustInvoice(t, f.s, tenant, draft.ReferenceCode))
	// Only a draft is issued: the number is not taken twice.
	_, err = f.s.IssueInvoice(ctx, tenant, draft.ReferenceCode, invoiceAt, "sandbox", invoiceAt)
	wantInvoiceRule(t, "issuing a pending invoice", err, recon.RuleInvalidState)
	if next := issueInvoice(t, f.s, tenant, sampleInvoice("C")); next.Number != 3 {
		t.Fatalf("after a refused issue: number %d, want 3", next.Number)
	}
}

func testInvoicesNumberingKeys(t *testing.T, f *invoiceFixture) {
	tenant := f.c.Tenant()
	other := newCompany(t, f.s, 2)
	test := testTenant(t, f.s, f.c.ID).ID
	number := func(tenant recon.TenantID, template, series string, date time.Time) int64 {
		in := sampleInvoice("K")
		in.TemplateCode, in.Series, in.IssuedDate = template, series, date
		return issueInvoice(t, f.s, tenant, in).Number
	}
	got := []int64{
		number(tenant, "1", "C26TAA", invoiceAt),
		number(tenant, "1", "C26TAA", invoiceAt),
		number(tenant, "1", "C26TBB", invoiceAt),                  // another series
		number(tenant, "2", "C26TAA", invoiceAt),                  // another template
		number(tenant, "1", "C26TAA", invoiceAt.AddDate(1, 0, 0)), // another year
		number(other.Tenant(), "1", "C26TAA", invoiceAt),          // another company
		number(test, "1", "C26TAA", invoiceAt),                    // the test tenant
		number(tenant, "1", "C26TAA", invoiceAt),
	}
	diff(t, "numbers", []int64{1, 2, 1, 1, 1, 1, 1, 3}, got)
}

func testInvoicesAnswer(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	a := issueInvoice(t, f.s, tenant, sampleInvoice("A"))
	b := issueInvoice(t, f.s, tenant, sampleInvoice("B"))
	at := invoiceAt.Add(5 * time.Second)
	ok, err := f.s.RecordInvoiceAnswer(ctx, tenant, a.ReferenceCode, recon.InvoiceAnswer{CQTCode: "00ABC"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if ok.Status != recon.InvoiceIssued || ok.CQTCode != "00ABC" || ok.Number != 1 || !ok.UpdatedAt.Equal(at) {
		t.Fatalf("accepted: %+v", ok)
	}
	diff(t, "accepted as stored", ok, mustInvoice(t, f.s, tenant, a.ReferenceCode))
	bad, err := f.s.RecordInvoiceAnswer(ctx, tenant, b.ReferenceCode, recon.InvoiceAnswer{Failure: "buyer tax code unknown"}, at)
	if err != nil {
		t.Fatal(err)
	}
	if bad.Status != recon.InvoiceFailed || bad.FailureReason != "buyer tax code unknown" || bad.CQTCode != "" || bad.Number != 2 {
		t.Fatalf("refused: %+v", bad)
	}
	// An answer is recorded once.
	_, err = f.s.RecordInvoiceAnswer(ctx, tenant, a.ReferenceCode, recon.InvoiceAnswer{Failure: "late"}, at)
	wantInvoiceRule(t, "a second answer", err, recon.RuleInvoiceNotPending)
	// A failed invoice keeps its number used.
	if c := issueInvoice(t, f.s, tenant, sampleInvoice("C")); c.Number != 3 {
		t.Fatalf("after a failure: number %d, want 3", c.Number)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNInvoiceIssued); n != 1 {
		t.Errorf("INVOICE_ISSUED deliveries: %d, want 1", n)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNInvoiceFailed); n != 1 {
		t.Errorf("INVOICE_FAILED deliveries: %d, want 1", n)
	}
	// A target that does not subscribe gets neither.
	subscribe(t, f.s, tenant, recon.IPNOrderPaid)
	d := issueInvoice(t, f.s, tenant, sampleInvoice("D"))
	if _, err := f.s.RecordInvoiceAnswer(ctx, tenant, d.ReferenceCode, recon.InvoiceAnswer{CQTCode: "X"}, at); err != nil {
		t.Fatal(err)
	}
	if n := countDeliveries(t, f.s, tenant, recon.IPNInvoiceIssued); n != 1 {
		t.Errorf("INVOICE_ISSUED deliveries without the subscription: %d, want still 1", n)
	}
}

func correction(name string, relation int, adjust string) *recon.Invoice {
	in := sampleInvoice(name)
	in.Relation, in.AdjustmentType = relation, adjust
	return in
}

func testInvoicesReplace(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	orig := issuedInvoice(t, f.s, tenant, "A")
	r, err := f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("A2", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != recon.InvoicePending || r.Number != 2 || r.OriginalReferenceCode != orig.ReferenceCode || r.Relation != recon.InvoiceRelReplace {
		t.Fatalf("replacement: %+v", r)
	}
	diff(t, "the replacement as stored", r, mustInvoice(t, f.s, tenant, r.ReferenceCode))
	if got := mustInvoice(t, f.s, tenant, orig.ReferenceCode); got.Status != recon.InvoiceReplaced || got.Number != 1 {
		t.Fatalf("original after replacement: %+v", got)
	}
	_, err = f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("A3", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	wantInvoiceRule(t, "replacing a replaced invoice", err, recon.RuleInvoiceAlreadyReplaced)
	_, err = f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("A3", recon.InvoiceRelAdjust, recon.AdjustIncrease), "sandbox", invoiceAt)
	wantInvoiceRule(t, "adjusting a replaced invoice", err, recon.RuleInvoiceAlreadyReplaced)
	// The replacement is not issued yet (pending): it cannot be replaced.
	_, err = f.s.CorrectInvoice(ctx, tenant, r.ReferenceCode, correction("A3", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	wantInvoiceRule(t, "replacing a pending invoice", err, recon.RuleInvoiceNotIssued)
	// Once issued, a replacement may itself be replaced.
	if _, err := f.s.RecordInvoiceAnswer(ctx, tenant, r.ReferenceCode, recon.InvoiceAnswer{CQTCode: "X"}, invoiceAt); err != nil {
		t.Fatal(err)
	}
	r2, err := f.s.CorrectInvoice(ctx, tenant, r.ReferenceCode, correction("A3", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	if err != nil || r2.Number != 3 || r2.OriginalReferenceCode != r.ReferenceCode {
		t.Fatalf("replacing the replacement: %+v, %v", r2, err)
	}
	// A refused correction writes nothing: no number taken.
	if next := issueInvoice(t, f.s, tenant, sampleInvoice("N")); next.Number != 4 {
		t.Fatalf("next number after refusals: %d, want 4", next.Number)
	}
	// A draft, a cancelled invoice: refused.
	draft, err := f.s.CreateInvoice(ctx, tenant, sampleInvoice("D"), false, "", invoiceAt)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.CorrectInvoice(ctx, tenant, draft.ReferenceCode, correction("D2", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	wantInvoiceRule(t, "replacing a draft", err, recon.RuleInvoiceNotIssued)
	c := issuedInvoice(t, f.s, tenant, "C")
	if _, err := f.s.CancelInvoice(ctx, tenant, c.ReferenceCode, "sai thông tin", invoiceAt); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.CorrectInvoice(ctx, tenant, c.ReferenceCode, correction("C2", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
	wantInvoiceRule(t, "replacing a cancelled invoice", err, recon.RuleInvoiceCancelled)
}

func testInvoicesAdjust(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	orig := issuedInvoice(t, f.s, tenant, "A")
	for i, typ := range []string{recon.AdjustIncrease, recon.AdjustDecrease, recon.AdjustInfo} {
		a, err := f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("A", recon.InvoiceRelAdjust, typ), "sandbox", invoiceAt)
		if err != nil {
			t.Fatalf("adjustment %s: %v", typ, err)
		}
		if a.Relation != recon.InvoiceRelAdjust || a.AdjustmentType != typ || a.Number != int64(i+2) || a.OriginalReferenceCode != orig.ReferenceCode {
			t.Fatalf("adjustment %s: %+v", typ, a)
		}
		if got := mustInvoice(t, f.s, tenant, orig.ReferenceCode); got.Status != recon.InvoiceAdjusted {
			t.Fatalf("original after adjustment %s: %s", typ, got.Status)
		}
	}
	// An adjusted invoice may be replaced, never cancelled.
	_, err := f.s.CancelInvoice(ctx, tenant, orig.ReferenceCode, "nhầm", invoiceAt)
	wantInvoiceRule(t, "cancelling an adjusted invoice", err, recon.RuleInvoiceAdjustedNoCancel)
	if _, err := f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("A", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt); err != nil {
		t.Fatalf("replacing an adjusted invoice: %v", err)
	}
}

func testInvoicesCancel(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	inv := issuedInvoice(t, f.s, tenant, "A")
	if _, err := f.s.CancelInvoice(ctx, tenant, inv.ReferenceCode, "  ", invoiceAt); recon.ErrorCode(err) != recon.EINVALID {
		t.Fatalf("cancel without a reason: %v", err)
	}
	at := invoiceAt.Add(time.Hour)
	c, err := f.s.CancelInvoice(ctx, tenant, inv.ReferenceCode, "khách hàng hủy đơn", at)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != recon.InvoiceCancelled || c.CancelReason != "khách hàng hủy đơn" || c.Number != 1 || !c.UpdatedAt.Equal(at) {
		t.Fatalf("cancelled: %+v", c)
	}
	diff(t, "cancelled as stored", c, mustInvoice(t, f.s, tenant, inv.ReferenceCode))
	_, err = f.s.CancelInvoice(ctx, tenant, inv.ReferenceCode, "again", at)
	wantInvoiceRule(t, "cancelling twice", err, recon.RuleInvoiceCancelled)
	// Its number stays used.
	if next := issueInvoice(t, f.s, tenant, sampleInvoice("B")); next.Number != 2 {
		t.Fatalf("number after a cancellation: %d, want 2", next.Number)
	}
	pending := issueInvoice(t, f.s, tenant, sampleInvoice("P"))
	_, err = f.s.CancelInvoice(ctx, tenant, pending.ReferenceCode, "r", at)
	wantInvoiceRule(t, "cancelling a pending invoice", err, recon.RuleInvoiceNotIssued)
	replaced := issuedInvoice(t, f.s, tenant, "R")
	if _, err := f.s.CorrectInvoice(ctx, tenant, replaced.ReferenceCode, correction("R2", recon.InvoiceRelReplace, ""), "sandbox", at); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.CancelInvoice(ctx, tenant, replaced.ReferenceCode, "r", at)
	wantInvoiceRule(t, "cancelling a replaced invoice", err, recon.RuleInvoiceAlreadyReplaced)
}

func testInvoicesRead(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	inv := issueInvoice(t, f.s, tenant, sampleInvoice("A"))
	byTracking, err := f.s.InvoiceByTracking(ctx, tenant, inv.TrackingCode)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "by tracking code", inv, byTracking)
	byLookup, lt, err := f.s.InvoiceByLookup(ctx, inv.LookupCode)
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "by lookup code", inv, byLookup)
	diff(t, "the lookup's tenant", tenant, lt)
	for _, bad := range []string{"", "nope", "00000000-0000-4000-8000-000000000000", inv.TrackingCode} {
		if _, err := f.s.Invoice(ctx, tenant, bad); recon.ErrorCode(err) != recon.ENOTFOUND {
			t.Errorf("Invoice(%q): %v, want not found", bad, err)
		}
	}
	if _, _, err := f.s.InvoiceByLookup(ctx, "ABCDEFGHJKLM"); recon.ErrorCode(err) != recon.ENOTFOUND {
		t.Errorf("an unknown lookup code: %v", err)
	}
}

func testInvoicesTenants(t *testing.T, f *invoiceFixture) {
	ctx := t.Context()
	inv := issuedInvoice(t, f.s, f.c.Tenant(), "A")
	other := newCompany(t, f.s, 2).Tenant()
	test := testTenant(t, f.s, f.c.ID).ID
	for _, tenant := range []recon.TenantID{other, test} {
		checks := []error{}
		_, err := f.s.Invoice(ctx, tenant, inv.ReferenceCode)
		checks = append(checks, err)
		_, err = f.s.InvoiceByTracking(ctx, tenant, inv.TrackingCode)
		checks = append(checks, err)
		_, err = f.s.IssueInvoice(ctx, tenant, inv.ReferenceCode, invoiceAt, "", invoiceAt)
		checks = append(checks, err)
		_, err = f.s.RecordInvoiceAnswer(ctx, tenant, inv.ReferenceCode, recon.InvoiceAnswer{CQTCode: "x"}, invoiceAt)
		checks = append(checks, err)
		_, err = f.s.CorrectInvoice(ctx, tenant, inv.ReferenceCode, correction("B", recon.InvoiceRelReplace, ""), "", invoiceAt)
		checks = append(checks, err)
		_, err = f.s.CancelInvoice(ctx, tenant, inv.ReferenceCode, "r", invoiceAt)
		checks = append(checks, err)
		_, err = f.s.InvoiceXML(ctx, tenant, inv.ReferenceCode)
		checks = append(checks, err)
		checks = append(checks, f.s.SetInvoiceXML(ctx, tenant, inv.ReferenceCode, []byte("<x/>")))
		for i, err := range checks {
			if recon.ErrorCode(err) != recon.ENOTFOUND {
				t.Errorf("tenant %v, check %d: %v, want not found", tenant, i, err)
			}
		}
		if list, total, err := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{}); err != nil || total != 0 || len(list) != 0 {
			t.Errorf("tenant %v lists %d invoices (%v)", tenant, total, err)
		}
	}
	diff(t, "the invoice after the other tenants tried", inv, mustInvoice(t, f.s, f.c.Tenant(), inv.ReferenceCode))
}

func testInvoicesList(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	var refs []string
	for i := range 5 {
		in := sampleInvoice(fmt.Sprint(i))
		inv, err := f.s.CreateInvoice(ctx, tenant, in, i%2 == 0, "sandbox", invoiceAt.AddDate(0, 0, i))
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, inv.ReferenceCode)
	}
	slices.Reverse(refs)
	codes := func(list []*recon.Invoice) []string {
		var out []string
		for _, inv := range list {
			out = append(out, inv.ReferenceCode)
		}
		return out
	}
	list, total, err := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{PerPage: 2, Page: 2})
	if err != nil || total != 5 {
		t.Fatalf("list: %d, %v", total, err)
	}
	diff(t, "page 2 of 2 newest first", refs[2:4], codes(list))
	list, total, err = f.s.Invoices(ctx, tenant, recon.InvoiceFilter{Status: recon.InvoiceDraft})
	if err != nil || total != 2 {
		t.Fatalf("drafts: %d, %v", total, err)
	}
	diff(t, "drafts", []string{refs[1], refs[3]}, codes(list))
	list, _, err = f.s.Invoices(ctx, tenant, recon.InvoiceFilter{From: "2026-03-03", To: "2026-03-04"})
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "from 3 to 4 March", []string{refs[2], refs[3]}, codes(list))
	if _, _, err := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{Status: "paid"}); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("unknown status: %v", err)
	}
	if _, _, err := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{From: "3/3/2026"}); recon.ErrorCode(err) != recon.EINVALID {
		t.Errorf("bad date: %v", err)
	}
}

func testInvoicesXML(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	inv := issueInvoice(t, f.s, tenant, sampleInvoice("A"))
	if x, err := f.s.InvoiceXML(ctx, tenant, inv.ReferenceCode); err != nil || x != nil {
		t.Fatalf("XML before it is stored: %q, %v", x, err)
	}
	if err := f.s.SetInvoiceXML(ctx, tenant, inv.ReferenceCode, []byte("<HDon/>")); err != nil {
		t.Fatal(err)
	}
	if x, err := f.s.InvoiceXML(ctx, tenant, inv.ReferenceCode); err != nil || string(x) != "<HDon/>" {
		t.Fatalf("XML: %q, %v", x, err)
	}
	if _, err := f.s.RecordInvoiceAnswer(ctx, tenant, inv.ReferenceCode, recon.InvoiceAnswer{CQTCode: "X"}, invoiceAt); err != nil {
		t.Fatal(err)
	}
	err := f.s.SetInvoiceXML(ctx, tenant, inv.ReferenceCode, []byte("<changed/>"))
	wantInvoiceRule(t, "changing an issued invoice's XML", err, recon.RuleInvoiceNotPending)
}

func testInvoicesPaidOrderQueue(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	a := newAccount(t, f.s, f.c.ID, "111")
	o1 := newOrder(t, f.s, f.c.ID, a.ID, "INV1", "DH0001", 100000)
	o2 := newOrder(t, f.s, f.c.ID, a.ID, "INV2", "DH0002", 200000)
	newOrder(t, f.s, f.c.ID, a.ID, "INV3", "DH0003", 300000) // unpaid
	pay(t, f.s, tenant, a.ID, "R1", "DH0001", "", 100000)
	pay(t, f.s, tenant, a.ID, "R2", "DH0002", "", 200000)
	orders, tenants, err := f.s.QueuedPaidOrders(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, o := range orders {
		ids = append(ids, o.ID)
	}
	diff(t, "queued paid orders", []int64{o1.ID, o2.ID}, ids)
	diff(t, "their tenants", []recon.TenantID{tenant, tenant}, tenants)
	inv, err := f.s.TakeQueuedOrder(ctx, tenant, o1.ID, sampleInvoice("O1"), "sandbox", invoiceAt)
	if err != nil || inv == nil || inv.OrderID != o1.ID || inv.Number != 1 || inv.Status != recon.InvoicePending {
		t.Fatalf("take o1: %+v, %v", inv, err)
	}
	// Taken once: a second node's take does nothing.
	if again, err := f.s.TakeQueuedOrder(ctx, tenant, o1.ID, sampleInvoice("O1"), "sandbox", invoiceAt); err != nil || again != nil {
		t.Fatalf("second take: %+v, %v", again, err)
	}
	// Another tenant's drop leaves it queued.
	if err := f.s.DropQueuedOrders(ctx, newCompany(t, f.s, 3).Tenant(), []int64{o2.ID}); err != nil {
		t.Fatal(err)
	}
	if orders, _, err := f.s.QueuedPaidOrders(ctx, 10); err != nil || len(orders) != 1 || orders[0].ID != o2.ID {
		t.Fatalf("queue after another tenant's drop: %d, %v", len(orders), err)
	}
	// Dropped (the company does not want invoices): no invoice.
	if none, err := f.s.TakeQueuedOrder(ctx, tenant, o2.ID, nil, "", invoiceAt); err != nil || none != nil {
		t.Fatalf("drop: %+v, %v", none, err)
	}
	if orders, _, err := f.s.QueuedPaidOrders(ctx, 10); err != nil || len(orders) != 0 {
		t.Fatalf("queue after: %d, %v", len(orders), err)
	}
	list, _, err := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{OrderID: o1.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("o1's invoices: %d, %v", len(list), err)
	}
	// Another tenant cannot take it.
	if _, err := f.s.TakeQueuedOrder(ctx, newCompany(t, f.s, 2).Tenant(), o2.ID, sampleInvoice("X"), "", invoiceAt); err != nil {
		t.Fatal(err)
	}
	if list, _, _ := f.s.Invoices(ctx, tenant, recon.InvoiceFilter{OrderID: o2.ID}); len(list) != 0 {
		t.Fatalf("o2 has %d invoices", len(list))
	}
}

// testInvoicesConcurrentIssues issues 100 invoices from 10 goroutines
// (creating to issue and issuing drafts) on one store: numbers exactly
// 1..100. The two-node version is sqlstore's TestInvoiceNumberingTwoNodes.
func testInvoicesConcurrentIssues(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	const workers, each = 10, 10
	var drafts []string
	for range workers * each / 2 {
		d, err := f.s.CreateInvoice(ctx, tenant, sampleInvoice("D"), false, "", invoiceAt)
		if err != nil {
			t.Fatal(err)
		}
		drafts = append(drafts, d.ReferenceCode)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	numbers := make(chan int64, workers*each)
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				var inv *recon.Invoice
				var err error
				if i%2 == 0 {
					inv, err = f.s.CreateInvoice(ctx, tenant, sampleInvoice("C"), true, "sandbox", invoiceAt)
				} else {
					inv, err = f.s.IssueInvoice(ctx, tenant, drafts[w*each/2+i/2], invoiceAt, "sandbox", invoiceAt)
				}
				if err != nil {
					errs <- err
					return
				}
				numbers <- inv.Number
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	close(numbers)
	for err := range errs {
		t.Fatal(err)
	}
	var got []int64
	for n := range numbers {
		got = append(got, n)
	}
	slices.Sort(got)
	want := make([]int64, workers*each)
	for i := range want {
		want[i] = int64(i + 1)
	}
	diff(t, "numbers", want, got)
}

// testInvoicesConcurrentCorrections races a replacement, an adjustment and
// a cancellation of one issued invoice: the original's lock lets exactly
// the rules allow through.
func testInvoicesConcurrentCorrections(t *testing.T, f *invoiceFixture) {
	ctx, tenant := t.Context(), f.c.Tenant()
	for round := range 5 {
		orig := issuedInvoice(t, f.s, tenant, fmt.Sprint("O", round))
		start := make(chan struct{})
		var wg sync.WaitGroup
		var replaced, cancelled int
		var mu sync.Mutex
		for range 3 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, err := f.s.CorrectInvoice(ctx, tenant, orig.ReferenceCode, correction("R", recon.InvoiceRelReplace, ""), "sandbox", invoiceAt)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					replaced++
				} else if recon.ErrorCode(err) != recon.EUNPROCESSABLE {
					t.Errorf("replace: %v", err)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				_, err := f.s.CancelInvoice(ctx, tenant, orig.ReferenceCode, "race", invoiceAt)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					cancelled++
				} else if recon.ErrorCode(err) != recon.EUNPROCESSABLE {
					t.Errorf("cancel: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if replaced+cancelled != 1 {
			t.Fatalf("round %d: %d replacements and %d cancellations, want one of them", round, replaced, cancelled)
		}
		got := mustInvoice(t, f.s, tenant, orig.ReferenceCode)
		if (replaced == 1) != (got.Status == recon.InvoiceReplaced) || (cancelled == 1) != (got.Status == recon.InvoiceCancelled) {
			t.Fatalf("round %d: original %s after %d replacements, %d cancellations", round, got.Status, replaced, cancelled)
		}
	}
}
