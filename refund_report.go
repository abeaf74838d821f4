package recon

// RefundTotals counts a company's refunds requested over a date range, by
// status (docs/api-v2.md, Refunds), with their amounts: the refunds part
// of the reconciliation report (docs/dashboard.md, Report).
type RefundTotals struct {
	From, To string
	// Counts and Amounts hold every status of RefundStatuses, 0 when none.
	Counts, Amounts map[string]int64
}

// Held is the count and amount of the refunds that hold their money or
// sent it (HoldingRefundStatuses): what the range refunded or is refunding.
// The amount is false when it does not fit int64 (it cannot: each status's
// sum was checked, and every refund draws on money received).
func (t *RefundTotals) Held() (count, amount int64, ok bool) {
	ok = true
	for _, s := range HoldingRefundStatuses {
		count += t.Counts[s]
		if amount, ok = AddAmounts(amount, t.Amounts[s]); !ok {
			return 0, 0, false
		}
	}
	return count, amount, true
}
