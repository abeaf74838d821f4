package recon

import (
	"fmt"
	"regexp"
	"strconv"
)

// Reason kinds: what a match decision's (or an exception's) reason sentence
// says (MatchReason.Kind).
const (
	ReasonPaid        = "paid"          // the transfer completed the order's payment
	ReasonShort       = "short"         // it paid part of the order
	ReasonOver        = "over"          // it paid more than the order's amount
	ReasonAlready     = "already"       // the order was already paid or cancelled
	ReasonVAInactive  = "va_inactive"   // its virtual account had expired or was cancelled
	ReasonNoOrderCode = "no_order_code" // no order has its payment code
	ReasonNoOrderVA   = "no_order_va"   // no order has its virtual account
	ReasonNoCode      = "no_code"       // no payment code, no virtual account (NoCodeReason)
	// An outgoing transfer with a refund's reference that does not settle
	// it (SettleRefund): Ref the refund, Paid the money that went out.
	ReasonRefundTwice   = "refund_twice"   // the refund was already settled by transaction Other
	ReasonRefundWaiting = "refund_waiting" // the refund still waits for approval
	ReasonRefundState   = "refund_state"   // the refund is State (cancelled, rejected, failed)
	ReasonRefundAmount  = "refund_amount"  // the refund is of Amount
	ReasonRefundAccount = "refund_account" // the refund leaves from bank account Amount, the transfer left Other
)

// How a reason's transfer names its order (MatchReason.By).
const (
	ReasonByCode = "code" // "payment code DH…", its memo's code
	ReasonByVA   = "va"   // "virtual account …", the bank account number it was sent to
	ReasonByMemo = "memo" // "memo code …", a memo virtual account of API v2
	ReasonByHand = "hand" // "a match by hand", a person's resolution
)

// MatchReason is a match decision's reason sentence as data: the kind of
// sentence and what it names, so the dashboard writes it in the reader's
// language (docs/dashboard.md, Language) while the API keeps the English
// sentence, English(), which is what the store records. ParseReason reads a
// recorded sentence back, so every row written before is read the same.
type MatchReason struct {
	Kind string // Reason… kinds
	// By and Ref: how the transfer names the order (ReasonBy…) and the code
	// or account number it names; for ReasonNoOrderCode and ReasonNoOrderVA,
	// Ref alone.
	By, Ref string
	Order   string // the order's invoice number
	// Paid is the order's paid total after the transfer, Amount the order's
	// amount, Diff what is short (ReasonShort) or over (ReasonOver), in VND.
	Paid, Amount, Diff int64
	// State is the order's status in lower case (ReasonAlready: captured,
	// cancelled) or the virtual account's (ReasonVAInactive: expired,
	// cancelled).
	State string
	// Other is a refund's settling transaction (ReasonRefundTwice) or the
	// bank account the transfer left (ReasonRefundAccount).
	Other int64
}

// named is how the English sentence names the order's finder.
func (r MatchReason) named() string {
	switch r.By {
	case ReasonByCode:
		return "payment code " + r.Ref
	case ReasonByVA:
		return "virtual account " + r.Ref
	case ReasonByMemo:
		return "memo code " + r.Ref
	}
	return "a match by hand"
}

// English is the sentence the store records and the APIs show.
func (r MatchReason) English() string {
	switch r.Kind {
	case ReasonVAInactive:
		return fmt.Sprintf("%s of order %s is %s: nothing was applied", r.named(), r.Order, r.State)
	case ReasonAlready:
		return fmt.Sprintf("%s names order %s, which is already %s", r.named(), r.Order, r.State)
	case ReasonShort:
		return fmt.Sprintf("%s names order %s: %d of %d VND paid, %d short", r.named(), r.Order, r.Paid, r.Amount, r.Diff)
	case ReasonPaid:
		return fmt.Sprintf("%s names order %s: %d of %d VND paid", r.named(), r.Order, r.Paid, r.Amount)
	case ReasonOver:
		return fmt.Sprintf("%s names order %s: %d VND paid for %d, %d over", r.named(), r.Order, r.Paid, r.Amount, r.Diff)
	case ReasonNoOrderCode:
		return "no order with payment code " + r.Ref
	case ReasonNoOrderVA:
		return "no order with virtual account " + r.Ref
	case ReasonNoCode:
		return NoCodeReason
	case ReasonRefundTwice:
		return fmt.Sprintf("refund %s was already settled by transaction %d: this second transfer of %d VND went out too", r.Ref, r.Other, r.Paid)
	case ReasonRefundWaiting:
		return fmt.Sprintf("refund %s still waits for approval, yet %d VND went out with its reference", r.Ref, r.Paid)
	case ReasonRefundState:
		return fmt.Sprintf("refund %s is %s, yet %d VND went out with its reference", r.Ref, r.State, r.Paid)
	case ReasonRefundAmount:
		return fmt.Sprintf("refund %s is %d VND, but the transfer with its reference sent %d VND", r.Ref, r.Amount, r.Paid)
	case ReasonRefundAccount:
		return fmt.Sprintf("refund %s leaves from bank account %d, but the transfer with its reference left bank account %d", r.Ref, r.Amount, r.Other)
	}
	return ""
}

// reasonByVA is how a virtual account of API v2 names its order.
func reasonByVA(va *VirtualAccount) (by, ref string) {
	if va.Kind == VAKindMemo {
		return ReasonByMemo, va.Number
	}
	return ReasonByVA, va.Number
}

const reasonNamed = `(?:payment code (\S+)|virtual account (\S+)|memo code (\S+)|(a match by hand))`

var reasonPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{ReasonVAInactive, regexp.MustCompile(`^` + reasonNamed + ` of order (.+) is ([a-z_]+): nothing was applied$`)},
	{ReasonAlready, regexp.MustCompile(`^` + reasonNamed + ` names order (.+), which is already ([a-z_]+)$`)},
	{ReasonShort, regexp.MustCompile(`^` + reasonNamed + ` names order (.+): (\d+) of (\d+) VND paid, (\d+) short$`)},
	{ReasonPaid, regexp.MustCompile(`^` + reasonNamed + ` names order (.+): (\d+) of (\d+) VND paid$`)},
	{ReasonOver, regexp.MustCompile(`^` + reasonNamed + ` names order (.+): (\d+) VND paid for (\d+), (\d+) over$`)},
	{ReasonNoOrderCode, regexp.MustCompile(`^no order with payment code (.+)$`)},
	{ReasonNoOrderVA, regexp.MustCompile(`^no order with virtual account (.+)$`)},
	{ReasonRefundTwice, regexp.MustCompile(`^refund (\S+) was already settled by transaction (\d+): this second transfer of (\d+) VND went out too$`)},
	{ReasonRefundWaiting, regexp.MustCompile(`^refund (\S+) still waits for approval, yet (\d+) VND went out with its reference$`)},
	{ReasonRefundState, regexp.MustCompile(`^refund (\S+) is ([a-z_]+), yet (\d+) VND went out with its reference$`)},
	{ReasonRefundAmount, regexp.MustCompile(`^refund (\S+) is (\d+) VND, but the transfer with its reference sent (\d+) VND$`)},
	{ReasonRefundAccount, regexp.MustCompile(`^refund (\S+) leaves from bank account (\d+), but the transfer with its reference left bank account (\d+)$`)},
}

// refundReasonArgs says where each submatch of a refund kind's pattern goes.
var refundReasonArgs = map[string][]string{
	ReasonRefundTwice:   {"ref", "other", "paid"},
	ReasonRefundWaiting: {"ref", "paid"},
	ReasonRefundState:   {"ref", "state", "paid"},
	ReasonRefundAmount:  {"ref", "amount", "paid"},
	ReasonRefundAccount: {"ref", "amount", "other"},
}

// ParseReason reads a recorded reason sentence back into its data; false
// when the sentence is none MatchReason writes (read it as it is).
func ParseReason(s string) (MatchReason, bool) {
	if s == NoCodeReason {
		return MatchReason{Kind: ReasonNoCode}, true
	}
	for _, p := range reasonPatterns {
		m := p.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		r := MatchReason{Kind: p.kind}
		if args, ok := refundReasonArgs[p.kind]; ok {
			for i, a := range args {
				var err error
				switch v := m[i+1]; a {
				case "ref":
					r.Ref = v
				case "state":
					r.State = v
				case "paid":
					r.Paid, err = strconv.ParseInt(v, 10, 64)
				case "amount":
					r.Amount, err = strconv.ParseInt(v, 10, 64)
				case "other":
					r.Other, err = strconv.ParseInt(v, 10, 64)
				}
				if err != nil {
					return MatchReason{}, false
				}
			}
		} else if p.kind == ReasonNoOrderCode || p.kind == ReasonNoOrderVA {
			r.Ref = m[1]
		} else {
			switch {
			case m[1] != "":
				r.By, r.Ref = ReasonByCode, m[1]
			case m[2] != "":
				r.By, r.Ref = ReasonByVA, m[2]
			case m[3] != "":
				r.By, r.Ref = ReasonByMemo, m[3]
			default:
				r.By = ReasonByHand
			}
			r.Order = m[5]
			rest := m[6:]
			switch p.kind {
			case ReasonVAInactive, ReasonAlready:
				r.State = rest[0]
			default:
				var err error
				for i, dst := range []*int64{&r.Paid, &r.Amount, &r.Diff}[:len(rest)] {
					if *dst, err = strconv.ParseInt(rest[i], 10, 64); err != nil {
						return MatchReason{}, false
					}
				}
			}
		}
		// A sentence read back must be the one its data writes, its sums right.
		if r.English() != s || r.Kind == ReasonShort && r.Diff != r.Amount-r.Paid ||
			r.Kind == ReasonOver && r.Diff != r.Paid-r.Amount || r.Kind == ReasonPaid && r.Paid != r.Amount {
			return MatchReason{}, false
		}
		return r, true
	}
	return MatchReason{}, false
}
