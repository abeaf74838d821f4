package recon

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
)

// Amounts of an invoice (docs/invoices.md, Amounts and words): the server
// computes every amount from the lines; a client's amounts are overwritten.
//
//   - A goods line (1): amount = quantity × unit price − its discount, the
//     product rounded half up to whole VND; VAT = amount × rate, rounded half
//     up per line; KCT and KKKNT carry no VAT.
//   - A promotion line (2, hàng khuyến mại): goods given away in a promotion.
//     They are shown with their quantity (and, for information, a unit price)
//     but the buyer pays nothing for them: amount and VAT are 0.
//   - A trade discount line (3, chiết khấu thương mại): amount = quantity
//     (1 when empty) × unit price, VAT = amount × rate; both are positive on
//     the line and are taken off the totals of their rate.
//   - A note line (4): text only, no quantity, price, discount or amounts.
//
// Template 2 (sales invoice, hóa đơn bán hàng) carries no VAT: its lines
// need no rate, their VAT is 0 and there is no per-rate breakdown.

// Limits of an invoice's lines.
const (
	MaxInvoiceItems    = 1000
	MaxInvoiceItemName = 500 // bytes
	MaxInvoiceItemCode = 50
	MaxInvoiceItemUnit = 50
	// quantityScale is 10^4: quantities have at most 4 fraction digits.
	quantityScale = 10_000
)

// ValidVATRate reports whether rate is one of VATRates.
func ValidVATRate(rate string) bool { return slices.Contains(VATRates, rate) }

// vatPercent is the rate in percent, 0 for KCT and KKKNT (no VAT).
func vatPercent(rate string) int64 {
	switch rate {
	case VAT5:
		return 5
	case VAT8:
		return 8
	case VAT10:
		return 10
	}
	return 0
}

// ParseQuantity parses a quantity: a decimal with digits, at most one dot and
// at most 4 fraction digits ("1", "2.5", "0.0001"), no sign or exponent. It
// returns the quantity times 10^4, exactly (no floating point).
func ParseQuantity(s string) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") {
		return 0, fmt.Errorf("quantity %q must be a decimal number such as 1 or 2.5", s)
	}
	if len(frac) > 4 {
		return 0, fmt.Errorf("quantity %q has more than 4 digits after the decimal point", s)
	}
	var q int64
	for _, c := range whole + frac + strings.Repeat("0", 4-len(frac)) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("quantity %q must be a decimal number such as 1 or 2.5", s)
		}
		if q > (math.MaxInt64-int64(c-'0'))/10 {
			return 0, fmt.Errorf("quantity %q is too large", s)
		}
		q = q*10 + int64(c-'0')
	}
	return q, nil
}

// mulDivHalfUp returns a×b/d rounded half up, for a, b >= 0 and d > 0, and
// false when the result does not fit an int64.
func mulDivHalfUp(a, b, d int64) (int64, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	lo, carry := bits.Add64(lo, uint64(d/2), 0)
	hi += carry
	if hi >= uint64(d) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(d))
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

// addChecked returns a+b and false on overflow.
func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// ComputeInvoice validates inv's lines and fills their Amount and VATAmount
// and inv.Totals (with the total in words), replacing whatever they held. A
// line number 0 becomes the line's position; otherwise lines are numbered
// 1..n in order. Errors are EINVALID naming the field, e.g. items[2].quantity.
func ComputeInvoice(inv *Invoice) error {
	if len(inv.Items) == 0 {
		return FieldError("items", "an invoice needs at least one line")
	}
	if len(inv.Items) > MaxInvoiceItems {
		return FieldError("items", "an invoice has at most %d lines", MaxInvoiceItems)
	}
	noVAT := inv.TemplateCode == InvoiceTemplateSales
	var t InvoiceTotals
	byRate := map[string]*RateTotal{}
	var goods, discounts, vatPlus, vatMinus int64
	for i := range inv.Items {
		it := &inv.Items[i]
		f := func(name string) string { return fmt.Sprintf("items[%d].%s", i, name) }
		if it.LineNumber == 0 {
			it.LineNumber = i + 1
		}
		if it.LineNumber != i+1 {
			return FieldError(f("line_number"), "line %d: line numbers run from 1 to %d in order (got %d)", i+1, len(inv.Items), it.LineNumber)
		}
		line := it.LineNumber
		switch {
		case it.LineType < LineGoods || it.LineType > LineNote:
			return FieldError(f("line_type"), "line %d: line_type must be 1 (goods or service), 2 (promotion), 3 (discount) or 4 (note)", line)
		case strings.TrimSpace(it.ItemName) == "":
			return FieldError(f("item_name"), "line %d: item_name is required", line)
		case len(it.ItemName) > MaxInvoiceItemName:
			return FieldError(f("item_name"), "line %d: item_name must be at most %d bytes", line, MaxInvoiceItemName)
		case len(it.ItemCode) > MaxInvoiceItemCode:
			return FieldError(f("item_code"), "line %d: item_code must be at most %d bytes", line, MaxInvoiceItemCode)
		case len(it.Unit) > MaxInvoiceItemUnit:
			return FieldError(f("unit"), "line %d: unit must be at most %d bytes", line, MaxInvoiceItemUnit)
		case it.UnitPrice < 0:
			return FieldError(f("unit_price"), "line %d: unit_price must not be negative", line)
		case it.DiscountAmount < 0:
			return FieldError(f("discount_amount"), "line %d: discount_amount must not be negative", line)
		}
		it.Amount, it.VATAmount = 0, 0
		if it.LineType == LineNote {
			if it.Quantity != "" || it.UnitPrice != 0 || it.DiscountAmount != 0 {
				return FieldError(f("line_type"), "line %d: a note line carries no quantity, unit_price or discount_amount", line)
			}
			if it.VATRate != "" && !ValidVATRate(it.VATRate) {
				return FieldError(f("vat_rate"), "line %d: vat_rate must be one of %s", line, strings.Join(VATRates, ", "))
			}
			continue
		}
		switch {
		case it.VATRate == "" && !noVAT:
			return FieldError(f("vat_rate"), "line %d: vat_rate is required (one of %s)", line, strings.Join(VATRates, ", "))
		case it.VATRate != "" && !ValidVATRate(it.VATRate):
			return FieldError(f("vat_rate"), "line %d: vat_rate must be one of %s", line, strings.Join(VATRates, ", "))
		}
		qty := int64(quantityScale)
		if it.Quantity != "" || it.LineType != LineDiscount {
			q, err := ParseQuantity(it.Quantity)
			if err != nil {
				return FieldError(f("quantity"), "line %d: %v", line, err)
			}
			if q == 0 {
				return FieldError(f("quantity"), "line %d: quantity must be greater than 0", line)
			}
			qty = q
		}
		if it.LineType == LinePromotion {
			if it.DiscountAmount != 0 {
				return FieldError(f("discount_amount"), "line %d: a promotion line is free: it has no discount_amount", line)
			}
			continue // shown, nothing to pay
		}
		gross, fits := mulDivHalfUp(qty, it.UnitPrice, quantityScale)
		if !fits || gross > MaxAmount {
			return FieldError(f("amount"), "line %d: quantity × unit_price is too large", line)
		}
		if it.DiscountAmount > gross {
			return FieldError(f("discount_amount"), "line %d: discount_amount (%d) exceeds quantity × unit_price (%d)", line, it.DiscountAmount, gross)
		}
		it.Amount = gross - it.DiscountAmount
		if !noVAT {
			it.VATAmount, _ = mulDivHalfUp(it.Amount, vatPercent(it.VATRate), 100) // amount <= MaxAmount: fits
		}
		sign := int64(1)
		var o1, o2, o3, o4 bool
		if it.LineType == LineDiscount {
			sign = -1
			discounts, o1 = addChecked(discounts, it.Amount)
			vatMinus, o2 = addChecked(vatMinus, it.VATAmount)
			o3, o4 = true, true
		} else {
			goods, o1 = addChecked(goods, it.Amount)
			vatPlus, o2 = addChecked(vatPlus, it.VATAmount)
			t.DiscountTotal, o3 = addChecked(t.DiscountTotal, it.DiscountAmount)
			o4 = true
		}
		if !noVAT {
			rt := byRate[it.VATRate]
			if rt == nil {
				rt = &RateTotal{VATRate: it.VATRate}
				byRate[it.VATRate] = rt
			}
			var o5, o6 bool
			rt.Amount, o5 = addChecked(rt.Amount, sign*it.Amount)
			rt.VATAmount, o6 = addChecked(rt.VATAmount, sign*it.VATAmount)
			o4 = o4 && o5 && o6
		}
		if !(o1 && o2 && o3 && o4) {
			return FieldError(f("amount"), "line %d: the invoice's totals overflow", line)
		}
	}
	if discounts > goods || vatMinus > vatPlus {
		return FieldError("items", "the discount lines (%d VND) exceed the goods lines (%d VND)", discounts, goods)
	}
	var fits bool
	t.TotalBeforeTax = goods - discounts
	t.VATTotal = vatPlus - vatMinus
	t.DiscountTotal, fits = addChecked(t.DiscountTotal, discounts)
	if !fits {
		return FieldError("items", "the invoice's discount total overflows")
	}
	t.TotalAmount, fits = addChecked(t.TotalBeforeTax, t.VATTotal)
	if !fits || t.TotalAmount > MaxAmount {
		return FieldError("items", "the invoice's total is too large")
	}
	t.ByRate = []RateTotal{}
	for _, r := range VATRates {
		if rt := byRate[r]; rt != nil {
			t.ByRate = append(t.ByRate, *rt)
		}
	}
	t.TotalInWords = VNDInWords(t.TotalAmount)
	inv.Totals = t
	return nil
}
