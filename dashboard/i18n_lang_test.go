package dashboard

import (
	"strings"
	"testing"

	"recon"
)

// Every reason kind is written in both languages from its data, amounts as
// money, with no argument missing or left over.
func TestReasonText(t *testing.T) {
	if got, want := lang("vi").Reason("payment code DH14625 names order SM-01126: 2467000 of 2467000 VND paid"),
		"mã thanh toán DH14625 ứng với đơn hàng SM-01126: đã trả 2.467.000 ₫ trên 2.467.000 ₫"; got != want {
		t.Errorf("vi: %q, want %q", got, want)
	}
	if got, want := lang("en").Reason("payment code DH14625 names order SM-01126: 2467000 of 2467000 VND paid"),
		"payment code DH14625 names order SM-01126: 2,467,000 VND of 2,467,000 VND paid"; got != want {
		t.Errorf("en: %q, want %q", got, want)
	}
	for _, r := range []recon.MatchReason{
		{Kind: recon.ReasonPaid, By: recon.ReasonByHand, Order: "A", Paid: 5, Amount: 5},
		{Kind: recon.ReasonShort, By: recon.ReasonByVA, Ref: "9704", Order: "A", Paid: 4, Amount: 5, Diff: 1},
		{Kind: recon.ReasonOver, By: recon.ReasonByMemo, Ref: "M1", Order: "A", Paid: 6, Amount: 5, Diff: 1},
		{Kind: recon.ReasonAlready, By: recon.ReasonByCode, Ref: "DH1", Order: "A", State: "captured"},
		{Kind: recon.ReasonVAInactive, By: recon.ReasonByMemo, Ref: "M1", Order: "A", State: "expired"},
		{Kind: recon.ReasonNoOrderCode, Ref: "DH1"}, {Kind: recon.ReasonNoOrderVA, Ref: "9704"}, {Kind: recon.ReasonNoCode},
		{Kind: recon.ReasonRefundTwice, Ref: "RF1", Other: 7, Paid: 5}, {Kind: recon.ReasonRefundWaiting, Ref: "RF1", Paid: 5},
		{Kind: recon.ReasonRefundState, Ref: "RF1", State: "cancelled", Paid: 5}, {Kind: recon.ReasonRefundAmount, Ref: "RF1", Amount: 4, Paid: 5},
		{Kind: recon.ReasonRefundAccount, Ref: "RF1", Amount: 1, Other: 2},
	} {
		s := r.English()
		for _, l := range []lang{"vi", "en"} {
			got := l.Reason(s)
			if got == s && l == "vi" || strings.Contains(got, "%!") {
				t.Errorf("%s %s: %q", l, r.Kind, got)
			}
		}
	}
	if got := lang("vi").Reason("a sentence of no kind"); got != "a sentence of no kind" {
		t.Errorf("unknown sentence: %q", got)
	}
}
