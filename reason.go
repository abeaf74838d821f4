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
		if p.kind == ReasonNoOrderCode || p.kind == ReasonNoOrderVA {
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
