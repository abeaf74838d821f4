package recon

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tax codes, series and the life cycle of invoices (docs/invoices.md, The
// seller and The life cycle): pure rules, tested as tables.

// taxCodeWeights are the tax authority's weights of a tax code's first nine
// digits; the tenth is the check digit 10 − (weighted sum mod 11). A sum
// that is 0 mod 11 would need the check digit 10: no code is issued with it.
var taxCodeWeights = [9]int{31, 29, 23, 19, 17, 13, 7, 5, 3}

// NormalizeTaxCode checks a tax code (mã số thuế) and returns its canonical
// form: 10 digits whose last is the check digit ("0100112437"), or a branch
// code of 13 characters, those 10 digits, a dash and the branch's 3 digits
// 001–999 ("0100112437-001"). A branch code written as 13 digits without the
// dash is accepted and gets its dash. Spaces around are trimmed; nothing
// else is accepted.
func NormalizeTaxCode(s string) (string, error) {
	s = strings.TrimSpace(s)
	var head, branch string
	switch {
	case len(s) == 10:
		head = s
	case len(s) == 14 && s[10] == '-':
		head, branch = s[:10], s[11:]
	case len(s) == 13:
		head, branch = s[:10], s[10:]
	default:
		return "", fmt.Errorf("a tax code has 10 digits, or 13 for a branch (0123456789-001)")
	}
	if !allDigits(head) || (branch != "" && !allDigits(branch)) {
		return "", fmt.Errorf("a tax code has 10 digits, or 13 for a branch (0123456789-001)")
	}
	sum := 0
	for i, w := range taxCodeWeights {
		sum += int(head[i]-'0') * w
	}
	if check := 10 - sum%11; check != int(head[9]-'0') {
		return "", fmt.Errorf("tax code %s has a wrong check digit (its last digit)", head)
	}
	if branch == "" {
		return head, nil
	}
	if branch == "000" {
		return "", fmt.Errorf("a branch tax code ends in 001 to 999")
	}
	return head + "-" + branch, nil
}

// ValidTaxCode reports whether s is a valid tax code (see NormalizeTaxCode).
func ValidTaxCode(s string) bool {
	_, err := NormalizeTaxCode(s)
	return err == nil
}

// InvoiceSeriesTypes are the letters the fourth character of a series may be
// (Circular 78/2021/TT-BTC, Art. 4): T an invoice of a business registered
// with the tax authority, D a sale of public assets or national reserves
// (or a special e-invoice), L one the tax authority issues case by case, M
// one made from a cash register, N an internal delivery note, B a delivery
// note to an agent, G a stamp or ticket that is a VAT invoice, H a stamp or
// ticket that is a sales invoice, X any other document.
const InvoiceSeriesTypes = "TDLMNBGHX"

// ValidInvoiceTemplate reports whether t is a template Recon issues:
// "1" (VAT invoice) or "2" (sales invoice).
func ValidInvoiceTemplate(t string) bool {
	return t == InvoiceTemplateVAT || t == InvoiceTemplateSales
}

// ValidateInvoiceSeries checks a series (ký hiệu hóa đơn) of 6 characters,
// e.g. C26TAA: C (with the tax authority's code) or K (without), the last
// two digits of the year, a type letter of InvoiceSeriesTypes, and two
// upper-case letters the seller chooses.
func ValidateInvoiceSeries(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("series %q: %s (a series looks like C26TAA: C or K, two digits of the year, a type letter, two letters)", s, why)
	}
	switch {
	case len(s) != 6 || !utf8.ValidString(s):
		return bad("it has 6 characters")
	case s[0] != 'C' && s[0] != 'K':
		return bad("it starts with C (coded by the tax authority) or K (without code)")
	case !allDigits(s[1:3]):
		return bad("its 2nd and 3rd characters are the year's last two digits")
	case !strings.ContainsRune(InvoiceSeriesTypes, rune(s[3])):
		return bad("its 4th character is a type letter: one of " + strings.Join(strings.Split(InvoiceSeriesTypes, ""), ", "))
	case !isUpper(s[4]) || !isUpper(s[5]):
		return bad("it ends with two upper-case letters A-Z")
	}
	return nil
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// InvoiceSeriesYear returns the year a valid series is for (C26TAA: 2026).
func InvoiceSeriesYear(s string) int {
	y, _ := strconv.Atoi(s[1:3])
	return 2000 + y
}

// Reasons of the life cycle's refusals (API v2: 422 error_code).
const (
	RuleInvoiceNotIssued         = "invoice_not_issued"
	RuleInvoiceAlreadyReplaced   = "invoice_already_replaced"
	RuleInvoiceCancelled         = "invoice_cancelled"
	RuleInvoiceAdjustedNoCancel  = "invoice_adjusted_cannot_cancel"
	RuleInvoiceCancelReason      = "cancel_reason_required"
	RuleInvoiceAdjustmentTypeBad = "invalid_adjustment_type"
	MaxInvoiceCancelReason       = 500 // bytes
)

// invoiceIssuedCheck refuses an original that is not (or no longer) an
// issued invoice a correction may refer to: never issued, replaced or
// cancelled. action names the correction for the message.
func invoiceIssuedCheck(orig *Invoice, action string) error {
	switch orig.Status {
	case InvoiceIssued, InvoiceAdjusted:
		return nil
	case InvoiceReplaced:
		return RuleError(RuleInvoiceAlreadyReplaced, "invoice %s was already replaced: %s the invoice that replaced it", orig.ReferenceCode, action)
	case InvoiceCancelled:
		return RuleError(RuleInvoiceCancelled, "invoice %s is cancelled: it cannot be %sd", orig.ReferenceCode, action)
	}
	return RuleError(RuleInvoiceNotIssued, "invoice %s is %s, not issued: only an issued invoice can be %sd", orig.ReferenceCode, orig.Status, action)
}

// CanIssueInvoice says whether inv may be issued: only a draft is (a new
// invoice is issued as it is created). Anything else is invalid_state.
func CanIssueInvoice(inv *Invoice) error {
	if inv.Status != InvoiceDraft {
		return RuleError(RuleInvalidState, "invoice %s is %s: only a draft can be issued", inv.ReferenceCode, inv.Status)
	}
	return nil
}

// CanReplaceInvoice says whether orig may be replaced: it must be issued
// and neither replaced nor cancelled. An adjusted invoice (issued, with
// adjustments) may be replaced: it is neither replaced nor cancelled
// (docs/invoices.md, The life cycle). A replacement may itself be replaced.
// The replacement carries the full content; orig becomes replaced.
func CanReplaceInvoice(orig *Invoice) error {
	return invoiceIssuedCheck(orig, "replace")
}

// CanAdjustInvoice says whether orig may be adjusted with an adjustment of
// type adjType (increase, decrease or info): it must be issued and neither
// replaced nor cancelled; adjustments may repeat (an adjusted invoice may be
// adjusted again).
func CanAdjustInvoice(orig *Invoice, adjType string) error {
	switch adjType {
	case AdjustIncrease, AdjustDecrease, AdjustInfo:
	default:
		return FieldError("adjustment_type", "adjustment_type must be %q, %q or %q", AdjustIncrease, AdjustDecrease, AdjustInfo).WithReason(RuleInvoiceAdjustmentTypeBad)
	}
	return invoiceIssuedCheck(orig, "adjust")
}

// CanCancelInvoice says whether inv may be cancelled with reason: it must be
// issued and neither replaced nor adjusted (nor already cancelled), and the
// reason is required. Its number stays used.
func CanCancelInvoice(inv *Invoice, reason string) error {
	switch inv.Status {
	case InvoiceIssued:
	case InvoiceAdjusted:
		return RuleError(RuleInvoiceAdjustedNoCancel, "invoice %s has adjustments: an adjusted invoice cannot be cancelled", inv.ReferenceCode)
	case InvoiceReplaced:
		return RuleError(RuleInvoiceAlreadyReplaced, "invoice %s was replaced: a replaced invoice cannot be cancelled", inv.ReferenceCode)
	case InvoiceCancelled:
		return RuleError(RuleInvoiceCancelled, "invoice %s is already cancelled", inv.ReferenceCode)
	default:
		return RuleError(RuleInvoiceNotIssued, "invoice %s is %s, not issued: only an issued invoice can be cancelled", inv.ReferenceCode, inv.Status)
	}
	switch r := strings.TrimSpace(reason); {
	case r == "":
		return FieldError("reason", "reason is required to cancel an invoice").WithReason(RuleInvoiceCancelReason)
	case len(reason) > MaxInvoiceCancelReason:
		return FieldError("reason", "reason must be at most %d bytes", MaxInvoiceCancelReason)
	}
	return nil
}
