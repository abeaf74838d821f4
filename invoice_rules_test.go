package recon

import "testing"

// TestNormalizeTaxCode uses tax codes published by the companies that hold
// them (Vietcombank 0100112437, Viettel 0100109106, FPT 0101248141, Vinamilk
// 0300588569, Vietnam Airlines 0100107518) and their one-digit variants.
func TestNormalizeTaxCode(t *testing.T) {
	for in, want := range map[string]string{
		"0100112437":     "0100112437",
		"0100109106":     "0100109106",
		"0101248141":     "0101248141",
		"0300588569":     "0300588569",
		"0100107518":     "0100107518",
		" 0100112437 ":   "0100112437",
		"0100112437-001": "0100112437-001",
		"0100112437001":  "0100112437-001",
		"0101248141-999": "0101248141-999",
	} {
		got, err := NormalizeTaxCode(in)
		if err != nil || got != want {
			t.Errorf("NormalizeTaxCode(%q) = %q, %v; want %q", in, got, err, want)
		}
		if !ValidTaxCode(in) {
			t.Errorf("ValidTaxCode(%q) = false", in)
		}
	}
	for _, in := range []string{
		"", "0100112438", "0100112436", "1100112437", "010011243", "01001124370", "0100112437-01",
		"0100112437-000", "0100112437000", "0100112437_001", "010011243A", "0100112437-00A",
		"０100112437", "-100112437", "0100112437 001",
		"0000000000", // weighted sum 0: would need check digit 10
	} {
		if ValidTaxCode(in) {
			t.Errorf("ValidTaxCode(%q) = true", in)
		}
	}
}

func TestValidateInvoiceSeries(t *testing.T) {
	for _, s := range []string{"C26TAA", "K26TYY", "C25DAB", "C26LZZ", "C26MAA", "K26NAA", "K26BAA", "C26GAA", "C26HAA", "C26XAA"} {
		if err := ValidateInvoiceSeries(s); err != nil {
			t.Errorf("ValidateInvoiceSeries(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"", "C26TA", "C26TAAA", "A26TAA", "c26TAA", "C2XTAA", "C26AAA", "C26ZAA", "C26TaA", "C26TA1", "C26tAA", "C26TĐA"} {
		if err := ValidateInvoiceSeries(s); err == nil {
			t.Errorf("ValidateInvoiceSeries(%q) accepted", s)
		}
	}
	if y := InvoiceSeriesYear("C26TAA"); y != 2026 {
		t.Errorf("InvoiceSeriesYear = %d", y)
	}
	for tpl, want := range map[string]bool{"1": true, "2": true, "": false, "3": false, "01": false} {
		if ValidInvoiceTemplate(tpl) != want {
			t.Errorf("ValidInvoiceTemplate(%q) != %v", tpl, want)
		}
	}
}

func TestInvoiceLifeCycle(t *testing.T) {
	type rule struct {
		name  string
		check func(*Invoice) error
	}
	rules := []rule{
		{"issue", CanIssueInvoice},
		{"replace", CanReplaceInvoice},
		{"adjust", func(i *Invoice) error { return CanAdjustInvoice(i, AdjustIncrease) }},
		{"cancel", func(i *Invoice) error { return CanCancelInvoice(i, "sai thông tin người mua") }},
	}
	// want[status][rule]: "" allowed, else the refusal's reason.
	want := map[string][4]string{
		InvoiceDraft:     {"", RuleInvoiceNotIssued, RuleInvoiceNotIssued, RuleInvoiceNotIssued},
		InvoicePending:   {RuleInvalidState, RuleInvoiceNotIssued, RuleInvoiceNotIssued, RuleInvoiceNotIssued},
		InvoiceFailed:    {RuleInvalidState, RuleInvoiceNotIssued, RuleInvoiceNotIssued, RuleInvoiceNotIssued},
		InvoiceIssued:    {RuleInvalidState, "", "", ""},
		InvoiceAdjusted:  {RuleInvalidState, "", "", RuleInvoiceAdjustedNoCancel},
		InvoiceReplaced:  {RuleInvalidState, RuleInvoiceAlreadyReplaced, RuleInvoiceAlreadyReplaced, RuleInvoiceAlreadyReplaced},
		InvoiceCancelled: {RuleInvalidState, RuleInvoiceCancelled, RuleInvoiceCancelled, RuleInvoiceCancelled},
	}
	if len(want) != len(InvoiceStatuses) {
		t.Fatalf("the table covers %d of %d statuses", len(want), len(InvoiceStatuses))
	}
	for status, reasons := range want {
		for i, r := range rules {
			err := r.check(&Invoice{ReferenceCode: "INV1", Status: status})
			switch {
			case reasons[i] == "" && err != nil:
				t.Errorf("%s a %s invoice: %v, want allowed", r.name, status, err)
			case reasons[i] != "" && (ErrorCode(err) != EUNPROCESSABLE || ErrorReason(err) != reasons[i]):
				t.Errorf("%s a %s invoice: %v (reason %q), want 422 %s", r.name, status, err, ErrorReason(err), reasons[i])
			}
		}
	}
	issued := &Invoice{ReferenceCode: "INV1", Status: InvoiceIssued}
	for _, typ := range []string{AdjustIncrease, AdjustDecrease, AdjustInfo} {
		if err := CanAdjustInvoice(issued, typ); err != nil {
			t.Errorf("adjust %s: %v", typ, err)
		}
	}
	for _, typ := range []string{"", "replace", "INCREASE"} {
		if err := CanAdjustInvoice(issued, typ); ErrorCode(err) != EINVALID {
			t.Errorf("adjust with type %q: %v, want EINVALID", typ, err)
		}
	}
	for _, reason := range []string{"", "   ", string(make([]byte, MaxInvoiceCancelReason+1))} {
		if err := CanCancelInvoice(issued, reason); ErrorCode(err) != EINVALID {
			t.Errorf("cancel with reason of %d bytes: %v, want EINVALID", len(reason), err)
		}
	}
}
