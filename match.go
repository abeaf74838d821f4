package recon

import (
	"math"
	"slices"
	"strings"
	"time"
)

// Match outcomes (docs/design.md, D5).
const (
	MatchCaptured  = "matched"   // the transfer completed the order's payment
	MatchUnderpaid = "underpaid" // matched an open order, cumulative amount still short
	MatchOverpaid  = "overpaid"  // completed the payment with more than the amount
	MatchDuplicate = "duplicate" // named an order already paid (or cancelled)
	MatchNone      = "unmatched" // no open order named by code or sub-account
	// MatchPartial paid part of an order through a partial or open virtual
	// account: expected, not an exception (docs/api-v2.md, Virtual accounts).
	MatchPartial = "partial"
	// MatchVAInactive was sent to an expired or cancelled virtual account:
	// nothing was applied, no order changed.
	MatchVAInactive = "va_inactive"
)

// Match rules: how a transfer names an order (MatchDecision.Rule).
const (
	MatchByCode       = "code"        // the payment code extracted from its memo
	MatchBySubAccount = "sub_account" // the order's virtual account, which it was sent to
	MatchByHand       = "manual"      // a person matched it, resolving an exception (ResolveMatch)
	// MatchByVA: a virtual account of API v2 (Payment.VA), by the transfer's
	// sub_account (a bank one) or the code in its memo (a memo one).
	MatchByVA = "va"
)

// MatchDecision records what matching decided for one incoming transaction, and why.
type MatchDecision struct {
	ID            int64
	CompanyID     int64
	TransactionID int64
	OrderID       int64 // 0 when unmatched
	Outcome       string
	// Rule is how the order was found: MatchByCode, MatchBySubAccount,
	// MatchByHand or "" (none).
	Rule        string
	Code        string
	Amount      int64 // the transfer's amount_in
	OrderAmount int64
	PaidTotal   int64 // the order's cumulative paid amount after this transfer
	Reason      string
	CreatedAt   time.Time
}

// Payment is an incoming transfer that names an order, as matching sees it.
type Payment struct {
	Amount int64  // the transfer's amount_in, above zero
	Rule   string // how it names the order: MatchByCode, MatchBySubAccount or MatchByHand
	// TransactionID and Code are the transfer's id and payment code, which
	// SettlePayments records in its decisions (MatchPayments reads neither).
	TransactionID int64
	Code          string
	// VA is the virtual account it was sent to (Rule MatchByVA), as read
	// under lock; nil otherwise. Its mode decides whether a short transfer
	// is an exception (exact) or expected (partial, open); an account not
	// active (expired, cancelled) takes nothing: MatchVAInactive.
	VA *VirtualAccount
}

// NamesOrder reports whether an incoming transfer names an order at all: it
// brings money in (amountIn above zero) and carries a payment code or was
// sent to a virtual account. Only such a transfer is routed (OrderRoutes) and
// decided about; one that names nothing gets no decision.
func NamesOrder(amountIn int64, code, subAccount string) bool {
	return amountIn > 0 && (code != "" || subAccount != "")
}

// OrderRoutes finds the order a transfer names among the orders the store
// read for a batch (those whose payment code or virtual account a transfer
// of the batch carries).
type OrderRoutes struct {
	byCode, byVA map[string]*Order
	byID         map[int64]*Order
	bank, memo   map[string]*VirtualAccount
}

// NewOrderRoutes indexes orders by payment code and virtual account, and
// the virtual accounts of API v2 (vas, whose orders are among orders) by
// number.
func NewOrderRoutes(orders []*Order, vas ...*VirtualAccount) OrderRoutes {
	r := OrderRoutes{byCode: map[string]*Order{}, byVA: map[string]*Order{}, byID: map[int64]*Order{},
		bank: map[string]*VirtualAccount{}, memo: map[string]*VirtualAccount{}}
	for _, o := range orders {
		r.byCode[o.PaymentCode] = o
		r.byID[o.ID] = o
		if o.VirtualAccount != "" {
			r.byVA[o.VirtualAccount] = o
		}
	}
	for _, va := range vas {
		if va.Kind == VAKindMemo {
			r.memo[va.Number] = va
		} else {
			r.bank[va.Number] = va
		}
	}
	return r
}

// RouteVA returns the virtual account of API v2 a transfer was sent to, and
// its order: a bank one its sub_account names, else a memo one whose code
// its memo carries (docs/design.md, D5: virtual accounts come before
// payment codes). nil, nil when neither names one.
func (r OrderRoutes) RouteVA(subAccount, code string) (*VirtualAccount, *Order) {
	va := r.bank[subAccount]
	if subAccount == "" || va == nil {
		va = r.memo[code]
		if code == "" || va == nil {
			return nil, nil
		}
	}
	o := r.byID[va.OrderID]
	if o == nil {
		return nil, nil
	}
	return va, o
}

// Route returns the order a transfer names and the rule that found it: the
// order of the virtual account it was sent to (MatchBySubAccount), else the
// order of the payment code of its memo (MatchByCode); nil and "" when
// neither names one of the orders.
func (r OrderRoutes) Route(subAccount, code string) (*Order, string) {
	if o := r.byVA[subAccount]; subAccount != "" && o != nil {
		return o, MatchBySubAccount
	}
	if o := r.byCode[code]; code != "" && o != nil {
		return o, MatchByCode
	}
	return nil, ""
}

// PaymentMatch is what matching decided about one Payment.
type PaymentMatch struct {
	Outcome string // MatchCaptured, MatchUnderpaid, MatchPartial, MatchOverpaid, MatchDuplicate or MatchVAInactive
	// Reason is the sentence shown with the decision, e.g. "payment code
	// DH20002 names order SHORT: 40000 of 100000 VND paid, 60000 short".
	Reason string
	// PaidTotal is the order's cumulative paid amount after the payment
	// (unchanged by a duplicate).
	PaidTotal int64
	// Captured marks the one payment that completed the order's payment
	// (MatchCaptured or MatchOverpaid): the order becomes CAPTURED, paid by
	// this transfer, and an ORDER_PAID notification is due.
	Captured bool
}

// MatchPayments applies docs/design.md, D5 to an order and the incoming
// transfers that name it, in the order they arrived: while the order awaits
// payment each transfer adds to its paid amount, and the one that brings the
// total to the order's amount captures it (MatchCaptured, or MatchOverpaid
// past it); one that leaves it short is MatchUnderpaid; every transfer for
// an order already captured or cancelled, before or during the sequence, is
// MatchDuplicate and adds nothing. A payment through a virtual account of
// API v2 (Payment.VA) that is expired or cancelled is MatchVAInactive and
// adds nothing, whatever the order's state (one through a paid account
// names a paid order: a duplicate); one through a partial or open
// account that leaves the order short is MatchPartial (expected), while
// through an exact one (as by a code) it is MatchUnderpaid, an exception
// whose money counts toward the order all the same, which waits for the
// rest (docs/api-v2.md, Virtual accounts). It returns one PaymentMatch per payment,
// in order; the order's paid amount afterwards is the last PaidTotal. o is
// not changed: the store writes the result.
//
// Paid amounts add up with checked arithmetic. A payment that would take the
// paid amount past the largest int64 is refused with an EINVALID error
// naming the order, rather than wrapped; so are a payment of zero or less, an
// unknown rule and an order with a negative amount, which no caller should
// pass. Amounts within MaxAmount, as ingestion and checkout validate them,
// never come near: an open order's paid amount stays below its amount.
func MatchPayments(o *Order, payments []Payment) ([]PaymentMatch, error) {
	if o.Amount < 0 || o.PaidAmount < 0 {
		return nil, Errorf(EINVALID, "order %s has a negative amount (%d VND, %d VND paid)", o.InvoiceNumber, o.Amount, o.PaidAmount)
	}
	out := make([]PaymentMatch, len(payments))
	status, paid := o.Status, o.PaidAmount
	for i, p := range payments {
		why := MatchReason{Order: o.InvoiceNumber}
		switch p.Rule {
		case MatchByCode:
			why.By, why.Ref = ReasonByCode, o.PaymentCode
		case MatchBySubAccount:
			why.By, why.Ref = ReasonByVA, o.VirtualAccount
		case MatchByHand:
			why.By = ReasonByHand
		case MatchByVA:
			if p.VA == nil {
				return nil, Errorf(EINVALID, "a transfer names order %s by a virtual account but carries none", o.InvoiceNumber)
			}
			why.By, why.Ref = reasonByVA(p.VA)
		default:
			return nil, Errorf(EINVALID, "a transfer names order %s by an unknown rule %q", o.InvoiceNumber, p.Rule)
		}
		if p.Amount <= 0 {
			return nil, Errorf(EINVALID, "a transfer to order %s must pay more than 0 VND, not %d", o.InvoiceNumber, p.Amount)
		}
		m := &out[i]
		if p.VA != nil && (p.VA.Status == VAExpired || p.VA.Status == VACancelled) {
			m.Outcome, m.PaidTotal = MatchVAInactive, paid
			why.Kind, why.State = ReasonVAInactive, p.VA.Status
			m.Reason = why.English()
			continue
		}
		if status != OrderAwaitingPayment {
			m.Outcome, m.PaidTotal = MatchDuplicate, paid
			why.Kind, why.State = ReasonAlready, strings.ToLower(status)
			m.Reason = why.English()
			continue
		}
		if p.Amount > math.MaxInt64-paid { // paid >= 0: this cannot itself overflow
			return nil, Errorf(EINVALID, "a transfer of %d VND to order %s would overflow its paid amount (%d VND paid so far)", p.Amount, o.InvoiceNumber, paid)
		}
		paid += p.Amount
		m.PaidTotal = paid
		why.Paid, why.Amount = paid, o.Amount
		switch {
		case paid < o.Amount:
			m.Outcome = MatchUnderpaid
			if p.VA != nil && p.VA.AmountMode != VAExact {
				m.Outcome = MatchPartial
			}
			why.Kind, why.Diff = ReasonShort, o.Amount-paid
			m.Reason = why.English()
			continue
		case paid == o.Amount:
			m.Outcome = MatchCaptured
			why.Kind = ReasonPaid
			m.Reason = why.English()
		default:
			m.Outcome = MatchOverpaid
			why.Kind, why.Diff = ReasonOver, paid-o.Amount
			m.Reason = why.English()
		}
		m.Captured, status = true, OrderCaptured
	}
	return out, nil
}

// Settlement is what SettlePayments decided about an order's payments.
type Settlement struct {
	// Order is the order after the payments (a copy of the order given).
	Order *Order
	// Decisions holds one decision per payment, in order, dated now.
	Decisions []*MatchDecision
	// Captured is the index of the payment that captured the order (an
	// ORDER_PAID notification is due), -1 when none did.
	Captured int
	// Changed reports that a payment counted toward the order, so its paid
	// amount (and on capture its status, paid time and paying transfer)
	// moved: the store writes Order. An order already captured or cancelled
	// only gets duplicate decisions, a transfer to an inactive virtual
	// account none, and is not written.
	Changed bool
	// PartiallyPaid holds the indexes of the payments that paid part of the
	// order without completing it (MatchUnderpaid, MatchPartial): an
	// ORDER_PARTIALLY_PAID notification is due for each, to subscribers.
	PartiallyPaid []int
}

// SettlePayments is MatchPayments and the capture step: the decision of each
// payment and the order's new state, as every way of matching records them
// (a batch's transfers, a match by hand). While o awaits payment its paid
// amount becomes the last payment's total, updated at now; the payment that
// captures it makes it CAPTURED, paid at now by that payment's transaction.
// A virtual account still active but past its expiry at now (the
// maintenance loop has not run yet) counts as expired. o is not changed;
// MatchPayments' errors are returned as they are.
func SettlePayments(o *Order, payments []Payment, now time.Time) (*Settlement, error) {
	payments = slices.Clone(payments)
	for k, p := range payments {
		if p.VA != nil && p.VA.Status == VAActive && !p.VA.ActiveAt(now) {
			expired := *p.VA
			expired.Status = VAExpired
			payments[k].VA = &expired
		}
	}
	ms, err := MatchPayments(o, payments)
	if err != nil {
		return nil, err
	}
	n := *o
	s := &Settlement{Order: &n, Decisions: make([]*MatchDecision, len(ms)), Captured: -1}
	for k, m := range ms {
		if PaysOrder(m.Outcome) {
			s.Changed = true
		}
		if m.Outcome == MatchUnderpaid || m.Outcome == MatchPartial {
			s.PartiallyPaid = append(s.PartiallyPaid, k)
		}
		p := payments[k]
		s.Decisions[k] = &MatchDecision{CompanyID: o.CompanyID, TransactionID: p.TransactionID, OrderID: o.ID, Outcome: m.Outcome,
			Rule: p.Rule, Code: p.Code, Amount: p.Amount, OrderAmount: o.Amount, PaidTotal: m.PaidTotal, Reason: m.Reason, CreatedAt: now}
		if m.Captured {
			s.Captured = k
			n.Status, n.PaidAt, n.PaidTransactionID = OrderCaptured, now, p.TransactionID
		}
	}
	if s.Changed {
		n.PaidAmount, n.UpdatedAt = ms[len(ms)-1].PaidTotal, now
	}
	return s, nil
}

// PayingOutcomes are the outcomes of a decision whose transfer paid an
// order (captured it, or paid part or more of it): what the order's detail
// lists as its payments, and what the dashboard counts as matched money.
var PayingOutcomes = []string{MatchCaptured, MatchUnderpaid, MatchPartial, MatchOverpaid}

// PaysOrder reports whether a decision's outcome is one of PayingOutcomes.
func PaysOrder(outcome string) bool { return slices.Contains(PayingOutcomes, outcome) }

// UnmatchedDecision is the decision matching makes for an incoming
// transaction whose code or sub-account names no order (the store derives it
// on read rather than writing it); nil for a transaction that names nothing
// or is outgoing.
func UnmatchedDecision(companyID, transactionID int64, code, subAccount string, amountIn int64, storedAt time.Time) *MatchDecision {
	if !NamesOrder(amountIn, code, subAccount) {
		return nil
	}
	d := &MatchDecision{CompanyID: companyID, TransactionID: transactionID, Outcome: MatchNone, Code: code, Amount: amountIn, CreatedAt: storedAt}
	if code != "" {
		d.Reason = MatchReason{Kind: ReasonNoOrderCode, Ref: code}.English()
	} else {
		d.Reason = MatchReason{Kind: ReasonNoOrderVA, Ref: subAccount}.English()
	}
	return d
}
