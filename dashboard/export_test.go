package dashboard

import "strings"

// RefundEnglish lists the English texts of the refunds' messages that
// differ from their Vietnamese ones and are phrases (single words may be
// in URLs and values: /dashboard/refunds, number_only): a Vietnamese page
// shows none of them.
func RefundEnglish() []string {
	var out []string
	for _, m := range refundMessages {
		if m.en != m.vi && strings.Contains(m.en, " ") {
			out = append(out, m.en)
		}
	}
	return out
}

// InvoiceEnglish lists, as RefundEnglish, the English phrases of the
// e-invoices' messages: a Vietnamese page shows none of them.
func InvoiceEnglish() []string {
	var out []string
	for _, m := range invoiceMessages {
		if m.en != m.vi && strings.Contains(m.en, " ") {
			out = append(out, m.en)
		}
	}
	return out
}
