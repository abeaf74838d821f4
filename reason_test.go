package recon_test

import (
	"testing"

	"recon"
)

// Every sentence matching writes reads back as its data (ParseReason), so
// the dashboard writes it in the reader's language; a sentence it did not
// write is not read.
func TestParseReason(t *testing.T) {
	o := &recon.Order{InvoiceNumber: "SM-01126", PaymentCode: "DH14625", VirtualAccount: "9704001", Amount: 2467000, Status: recon.OrderAwaitingPayment}
	var sentences []string
	for _, rule := range []string{recon.MatchByCode, recon.MatchBySubAccount, recon.MatchByHand} {
		for _, amounts := range [][]int64{{2467000}, {1000, 2466000, 5}, {3000000}} {
			var ps []recon.Payment
			for _, a := range amounts {
				ps = append(ps, recon.Payment{Amount: a, Rule: rule})
			}
			ms, err := recon.MatchPayments(o, ps)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				sentences = append(sentences, m.Reason)
			}
		}
	}
	for _, va := range []*recon.VirtualAccount{{Kind: recon.VAKindMemo, Number: "VA123", Status: recon.VAExpired, AmountMode: recon.VAExact},
		{Kind: recon.VAKindBank, Number: "9704002", Status: recon.VAActive, AmountMode: recon.VAPartial}} {
		ms, err := recon.MatchPayments(o, []recon.Payment{{Amount: 100, Rule: recon.MatchByVA, VA: va}})
		if err != nil {
			t.Fatal(err)
		}
		sentences = append(sentences, ms[0].Reason)
	}
	sentences = append(sentences, recon.UnmatchedDecision(1, 2, "DH999", "", 5, o.CreatedAt).Reason,
		recon.UnmatchedDecision(1, 2, "", "970400999", 5, o.CreatedAt).Reason, recon.NoCodeReason)
	for _, c := range []struct {
		status               string
		settled, tx, account int64
		out                  int64
	}{{recon.RefundSucceeded, 7, 8, 1, 500}, {recon.RefundPendingApproval, 0, 8, 1, 500}, {recon.RefundCancelled, 0, 8, 1, 500},
		{recon.RefundPending, 0, 8, 1, 400}, {recon.RefundPending, 0, 8, 2, 500}} {
		r := &recon.Refund{Reference: "RF-1A2B", Status: c.status, SettledTransactionID: c.settled, Amount: 500, BankAccountID: 1}
		_, reason := recon.SettleRefund(r, c.tx, c.account, c.out)
		sentences = append(sentences, reason)
	}
	kinds := map[string]bool{}
	for _, s := range sentences {
		r, ok := recon.ParseReason(s)
		if !ok || r.English() != s {
			t.Errorf("%q reads back as %+v, %v", s, r, ok)
		}
		kinds[r.Kind] = true
	}
	for _, k := range []string{recon.ReasonPaid, recon.ReasonShort, recon.ReasonOver, recon.ReasonAlready, recon.ReasonVAInactive,
		recon.ReasonNoOrderCode, recon.ReasonNoOrderVA, recon.ReasonNoCode, recon.ReasonRefundTwice, recon.ReasonRefundWaiting,
		recon.ReasonRefundState, recon.ReasonRefundAmount, recon.ReasonRefundAccount} {
		if !kinds[k] {
			t.Errorf("no sentence of kind %s", k)
		}
	}
	// The example of docs/dashboard.md, Language, as the store has it.
	if r, ok := recon.ParseReason("payment code DH14625 names order SM-01126: 2467000 of 2467000 VND paid"); !ok ||
		r != (recon.MatchReason{Kind: recon.ReasonPaid, By: recon.ReasonByCode, Ref: "DH14625", Order: "SM-01126", Paid: 2467000, Amount: 2467000}) {
		t.Errorf("the example: %+v %v", r, ok)
	}
	for _, s := range []string{"", "refund R1 still waits for approval", "payment code DH1 names order X: 5 of 6 VND paid, 2 short",
		"payment code DH1 names order X: 99999999999999999999 of 6 VND paid"} {
		if r, ok := recon.ParseReason(s); ok {
			t.Errorf("%q read as %+v", s, r)
		}
	}
}
