package recon

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Refund states (docs/api-v2.md, Refunds):
//
//	pending_approval ──approve──▶ pending ──send──▶ processing ──settle──▶ succeeded
//	       │                        │   └──────────settle────────────────▶ succeeded
//	       ├──reject──▶ rejected    │                  └──fail──▶ failed
//	       └──cancel──▶ cancelled ◀─┘ cancel
//
// pending_approval, pending and processing hold their amount (it is not
// refundable again); succeeded keeps it for good; failed, rejected and
// cancelled free it.
const (
	RefundPendingApproval = "pending_approval"
	RefundPending         = "pending"
	RefundProcessing      = "processing"
	RefundSucceeded       = "succeeded"
	RefundFailed          = "failed"
	RefundRejected        = "rejected"
	RefundCancelled       = "cancelled"
)

// RefundStatuses lists every refund status, in the order of the diagram.
var RefundStatuses = []string{RefundPendingApproval, RefundPending, RefundProcessing, RefundSucceeded, RefundFailed, RefundRejected, RefundCancelled}

// HoldingRefundStatuses are the statuses whose amount counts against what is
// refundable: waiting (for approval, for the money to leave) or sent.
var HoldingRefundStatuses = []string{RefundPendingApproval, RefundPending, RefundProcessing, RefundSucceeded}

// RefundHolds reports whether a refund in status holds its amount: the
// amount is not refundable again (HoldingRefundStatuses).
func RefundHolds(status string) bool { return slices.Contains(HoldingRefundStatuses, status) }

// The business rules a refund request or change can break: API v2 answers
// each with 422 and the code as its error_code (docs/api-v2.md, Refunds):
// an EUNPROCESSABLE *Error whose Reason is the code (RuleError).
const (
	// RuleAmountExceedsRefundable: the amount asked is more than what is
	// still refundable (and something is).
	RuleAmountExceedsRefundable = "amount_exceeds_refundable"
	// RuleAlreadyRefunded: money came in, but refunds already hold all of it.
	RuleAlreadyRefunded = "already_refunded"
	// RuleNothingToRefund: no money came in (an order not paid, an
	// outgoing transaction).
	RuleNothingToRefund = "nothing_to_refund"
	// RuleInvalidState: the refund's status does not allow the change
	// (NextRefund).
	RuleInvalidState = "invalid_state"
	// RuleReceiverRequired: the request names no receiver and the bank data
	// does not say whose account the money came from.
	RuleReceiverRequired = "receiver_required"
)

// RefundRules lists every refund rule code.
var RefundRules = []string{RuleAmountExceedsRefundable, RuleAlreadyRefunded, RuleNothingToRefund, RuleInvalidState, RuleReceiverRequired}

// RefundRule returns the refund rule err broke (one of RefundRules), ""
// when it is no refund rule's error.
func RefundRule(err error) string {
	if r := ErrorReason(err); ErrorCode(err) == EUNPROCESSABLE && slices.Contains(RefundRules, r) {
		return r
	}
	return ""
}

// RefundReceiver is the account a refund's money goes to.
type RefundReceiver struct {
	BankBIN       string // the receiving bank's NAPAS BIN, 6 digits
	AccountNumber string
	AccountName   string
}

// Known reports whether the receiver is given at all.
func (r RefundReceiver) Known() bool { return r != RefundReceiver{} }

// Validate checks a receiver as a merchant gives it (field names of the v2
// body, receiver.*).
func (r RefundReceiver) Validate() error {
	switch {
	case len(r.BankBIN) != 6 || strings.Trim(r.BankBIN, "0123456789") != "":
		return FieldError("receiver.bank_bin", "receiver.bank_bin must be the receiving bank's 6-digit NAPAS BIN (e.g. 970436 for Vietcombank)")
	case !validAccountNumber(r.AccountNumber) || len(r.AccountNumber) > 19:
		return FieldError("receiver.account_number", "receiver.account_number must be 1 to 19 letters or digits")
	case strings.TrimSpace(r.AccountName) == "" || utf8.RuneCountInString(r.AccountName) > 100:
		return FieldError("receiver.account_name", "receiver.account_name is required, at most 100 characters")
	}
	if bad := BadText(r.AccountName, false); bad != "" {
		return FieldError("receiver.account_name", "receiver.account_name %s", bad)
	}
	return nil
}

// RefundActor is who requested or decided a refund: a user (UserID, Email)
// through a user's token or the dashboard, or the company's server through a
// client-credentials token (ClientID, no user). Four eyes compare users: a
// user is the same person whatever client their token came through.
type RefundActor struct {
	UserID   int64
	Email    string
	ClientID string
}

// ActorOf is the actor behind an authenticated caller.
func ActorOf(c *Caller) RefundActor {
	a := RefundActor{ClientID: c.ClientID}
	if c.User != nil {
		a.UserID, a.Email = c.User.ID, c.User.Email
	}
	return a
}

// IsZero reports whether nobody is named.
func (a RefundActor) IsZero() bool { return a == RefundActor{} }

// Refund is money sent back to a payer (docs/api-v2.md, Refunds).
type Refund struct {
	ID        string // xid (UUID form)
	CompanyID int64
	// OrderID is the order whose payment it refunds (0: a transaction that
	// paid no order); OrderPublicID is that order's API v2 id.
	OrderID       int64
	OrderPublicID string
	// TransactionID is the transaction it was requested for (0 when it was
	// requested for an order: Allocations say what it draws on).
	TransactionID int64
	// BankAccountID is the account the money leaves from: the account of the
	// newest transaction it draws on, where its outgoing transfer is
	// expected.
	BankAccountID int64
	Amount        int64
	Reason        string
	Receiver      RefundReceiver
	// Reference is the code the outgoing transfer's memo carries: "HT" and
	// RefundReferenceLen characters of RefundReferenceAlphabet, unique per
	// tenant.
	Reference     string
	Status        string
	FailureReason string
	RequestedBy   RefundActor
	// DecidedBy is the person who approved or rejected it (zero otherwise;
	// no ClientID: a decision is a person's, whichever client).
	DecidedBy RefundActor
	// Payout is the payout connector that took it ("" none: the merchant
	// sends it by hand).
	Payout string
	// SettledTransactionID is the outgoing transfer that settled it.
	SettledTransactionID int64
	// Allocations are the incoming transactions it draws on and how much of
	// each, newest first; they add up to Amount.
	Allocations          []RefundAllocation
	CreatedAt, UpdatedAt time.Time
}

// RefundAllocation is the part of a refund drawn on one incoming transaction.
type RefundAllocation struct {
	TransactionID int64
	Amount        int64
}

// RefundSource is an incoming transaction a refund may draw on, as the store
// reads it under lock: its amount and what refunds holding their amount
// (RefundHolds) already draw on it.
type RefundSource struct {
	TransactionID int64
	BankAccountID int64
	// OrderID is the order it paid (a paying decision, PaysOrder), 0 none.
	OrderID         int64
	TransactionDate time.Time
	AmountIn        int64
	Refunded        int64
}

// Refundable is what may still be refunded of the transaction.
func (s RefundSource) Refundable() int64 { return max(s.AmountIn-s.Refunded, 0) }

// NewestFirst sorts sources as refunds draw on them: newest transaction
// date first, then the higher id.
func NewestFirst(sources []RefundSource) {
	slices.SortStableFunc(sources, func(a, b RefundSource) int {
		if c := b.TransactionDate.Compare(a.TransactionDate); c != 0 {
			return c
		}
		return cmp.Compare(b.TransactionID, a.TransactionID)
	})
}

// AllocateRefund draws amount on the sources, newest first (NewestFirst),
// each up to what it has left: the allocations add up to amount exactly, to
// the VND, and none takes more than its source's Refundable. sources is not
// changed. An amount above what they hold together is
// RuleAmountExceedsRefundable; zero or less is EINVALID.
func AllocateRefund(sources []RefundSource, amount int64) ([]RefundAllocation, error) {
	if amount <= 0 {
		return nil, FieldError("amount", "amount must be more than 0 VND, not %d", amount)
	}
	sorted := slices.Clone(sources)
	NewestFirst(sorted)
	var out []RefundAllocation
	left := amount
	for _, s := range sorted {
		if left == 0 {
			break
		}
		take := min(s.Refundable(), left)
		if take <= 0 {
			continue
		}
		out = append(out, RefundAllocation{TransactionID: s.TransactionID, Amount: take})
		left -= take
	}
	if left > 0 {
		return nil, RuleError(RuleAmountExceedsRefundable, "amount %d VND exceeds the refundable %d VND", amount, amount-left)
	}
	return out, nil
}

// MaxRefundReason bounds a refund's reason, in characters.
const MaxRefundReason = 255

// RefundRequest asks for a refund: by order (OrderID) or by transaction
// (TransactionID), exactly one of them.
type RefundRequest struct {
	OrderID       int64
	TransactionID int64
	// Amount is the amount to refund; 0 refunds everything refundable.
	Amount   int64
	Reason   string
	Receiver RefundReceiver
	By       RefundActor
}

// Validate checks the request before anything is read: what it refunds, an
// amount from 0 (everything) to MaxAmount, a reason of 1 to MaxRefundReason
// characters of text, a receiver when one is given, and who asks. The reason
// is trimmed.
func (in *RefundRequest) Validate() error {
	switch {
	case (in.OrderID == 0) == (in.TransactionID == 0):
		return Errorf(EINVALID, "a refund is requested for an order or for a transaction, exactly one")
	case in.OrderID < 0 || in.TransactionID < 0:
		return Errorf(EINVALID, "order and transaction ids are positive")
	case in.Amount < 0 || in.Amount > MaxAmount:
		return FieldError("amount", "amount must be a whole number of VND from 1 to %d (leave it out to refund everything refundable)", int64(MaxAmount))
	case in.By.IsZero():
		return Errorf(EINVALID, "a refund needs who requests it")
	}
	in.Reason = strings.TrimSpace(in.Reason)
	switch {
	case in.Reason == "":
		return FieldError("reason", "reason is required: say why the money goes back")
	case utf8.RuneCountInString(in.Reason) > MaxRefundReason:
		return FieldError("reason", "reason must be at most %d characters", MaxRefundReason)
	}
	if bad := BadText(in.Reason, false); bad != "" {
		return FieldError("reason", "reason %s", bad)
	}
	if in.Receiver.Known() {
		return in.Receiver.Validate()
	}
	return nil
}

// RefundPlan is what the store read under lock for a new refund: the
// transactions it may draw on (by transaction: that one; by order: the
// order's paying transactions) and, when they paid an order, that order.
type RefundPlan struct {
	Sources []RefundSource
	// Order is the order the sources paid (nil: by a transaction that paid
	// none). Its PaidAmount less RefundedAmount bounds what is refundable,
	// with the sources' own.
	Order *Order
	// Threshold is the company's refund_approval_threshold (0: none).
	Threshold int64
}

// Refundable is what may still be refunded: the sources' refundable
// amounts together, no more than the order's paid amount less its refunds.
// The two agree while the order's paying transactions are all stored; a
// transaction retention deleted cannot be refunded any more.
func (p *RefundPlan) Refundable() int64 {
	var sum int64
	for _, s := range p.Sources {
		sum += s.Refundable() // each within MaxAmount, and an order's transfers within its int64 paid amount
	}
	if p.Order != nil {
		sum = min(sum, max(p.Order.PaidAmount-p.Order.RefundedAmount, 0))
	}
	return sum
}

// received is what came in at all.
func (p *RefundPlan) received() int64 {
	var sum int64
	for _, s := range p.Sources {
		sum += s.AmountIn
	}
	return sum
}

// NewRefund applies the request's rules to what the store read under lock
// (docs/api-v2.md, Refunds) and returns the new refund, not yet stored
// (no ID, Reference or times), with its allocations:
//   - nothing came in (no paying transaction, an outgoing one):
//     RuleNothingToRefund;
//   - refunds hold all of it: RuleAlreadyRefunded;
//   - more asked than refundable: RuleAmountExceedsRefundable (no amount
//     asks for everything refundable);
//   - no receiver: RuleReceiverRequired. A transaction row carries no
//     counter-party account (bank feeds, statements and sandbox transfers
//     give none: docs/api.md, Transactions), so the request must name one.
//
// It is pending_approval when the company has a threshold and the amount is
// at or above it, else pending.
func NewRefund(in *RefundRequest, p *RefundPlan) (*Refund, error) {
	what := fmt.Sprintf("transaction %d", in.TransactionID)
	if in.OrderID != 0 {
		what = fmt.Sprintf("order %d", in.OrderID)
		if p.Order != nil {
			what = "order " + p.Order.InvoiceNumber
		}
	}
	if p.received() <= 0 || (p.Order != nil && p.Order.PaidAmount <= 0) {
		return nil, RuleError(RuleNothingToRefund, "%s has received no money: there is nothing to refund", what)
	}
	refundable := p.Refundable()
	if refundable <= 0 {
		return nil, RuleError(RuleAlreadyRefunded, "%s is already refunded: refunds hold everything it received", what)
	}
	amount := in.Amount
	if amount == 0 {
		amount = refundable
	}
	if amount > refundable {
		return nil, RuleError(RuleAmountExceedsRefundable, "amount %d VND exceeds what %s has left to refund, %d VND", amount, what, refundable)
	}
	if !in.Receiver.Known() {
		return nil, RuleError(RuleReceiverRequired, "receiver is required: the bank data of %s does not say whose account the money came from", what)
	}
	alloc, err := AllocateRefund(p.Sources, amount)
	if err != nil {
		return nil, err
	}
	r := &Refund{TransactionID: in.TransactionID, Amount: amount, Reason: in.Reason, Receiver: in.Receiver,
		Status: RefundPending, RequestedBy: in.By, Allocations: alloc}
	if p.Order != nil {
		r.OrderID, r.CompanyID = p.Order.ID, p.Order.CompanyID
	}
	for _, s := range p.Sources {
		if s.TransactionID == alloc[0].TransactionID {
			r.BankAccountID = s.BankAccountID
		}
	}
	if p.Threshold > 0 && amount >= p.Threshold {
		r.Status = RefundPendingApproval
	}
	return r, nil
}

// RefundEvent is what happens to a refund.
type RefundEvent string

// Refund events (the arrows of the diagram at RefundPendingApproval).
const (
	// RefundApprove: a second person lets a refund waiting for approval go
	// (pending_approval → pending).
	RefundApprove RefundEvent = "approve"
	// RefundReject: a second person refuses it (pending_approval → rejected).
	RefundReject RefundEvent = "reject"
	// RefundCancel: the merchant withdraws a refund whose money has not left
	// (pending_approval or pending → cancelled).
	RefundCancel RefundEvent = "cancel"
	// RefundSend: a payout connector took it (pending → processing).
	RefundSend RefundEvent = "send"
	// RefundSettle: its outgoing transfer was seen (pending or processing →
	// succeeded).
	RefundSettle RefundEvent = "settle"
	// RefundFail: the payout connector could not send it (processing →
	// failed).
	RefundFail RefundEvent = "fail"
)

// refundMoves is the transition table: event → from → to.
var refundMoves = map[RefundEvent]map[string]string{
	RefundApprove: {RefundPendingApproval: RefundPending},
	RefundReject:  {RefundPendingApproval: RefundRejected},
	RefundCancel:  {RefundPendingApproval: RefundCancelled, RefundPending: RefundCancelled},
	RefundSend:    {RefundPending: RefundProcessing},
	RefundSettle:  {RefundPending: RefundSucceeded, RefundProcessing: RefundSucceeded},
	RefundFail:    {RefundProcessing: RefundFailed},
}

// RefundChange is an event with what it carries.
type RefundChange struct {
	Event RefundEvent
	// By is who approves or rejects (RefundApprove, RefundReject).
	By RefundActor
	// Payout names the connector of a RefundSend.
	Payout string
	// SettledBy is the outgoing transfer of a RefundSettle.
	SettledBy int64
	// Reason is a RefundFail's failure reason.
	Reason string
}

// RefundAllows reports whether the event applies to a refund in status.
func RefundAllows(status string, event RefundEvent) bool {
	_, ok := refundMoves[event][status]
	return ok
}

// NextRefund returns r after the change at now; r is not changed (the store
// locks the refund, calls it and writes the result). An event its status
// does not allow is RuleInvalidState naming both. Approve and reject need a
// person (ch.By.UserID) other than the requester: a user never decides
// their own refund, through whichever client (EFORBIDDEN). Whether the
// person's role may approve at all is Caller.Authorize(ActionApproveRefunds),
// checked before.
func NextRefund(r *Refund, ch RefundChange, now time.Time) (*Refund, error) {
	moves, ok := refundMoves[ch.Event]
	if !ok {
		return nil, Errorf(EINVALID, "unknown refund event %q", ch.Event)
	}
	to, ok := moves[r.Status]
	if !ok {
		return nil, RuleError(RuleInvalidState, "refund %s is %s: it cannot %s (%s)", r.ID, r.Status, ch.Event, refundCan(r.Status))
	}
	n := *r
	n.Status, n.UpdatedAt = to, now
	switch ch.Event {
	case RefundApprove, RefundReject:
		if ch.By.UserID == 0 {
			return nil, Errorf(EFORBIDDEN, "only a person may %s a refund: sign in as an Admin or SuperAdmin user", ch.Event)
		}
		if r.RequestedBy.UserID != 0 && r.RequestedBy.UserID == ch.By.UserID {
			return nil, Errorf(EFORBIDDEN, "you requested refund %s: another Admin or SuperAdmin must %s it", r.ID, ch.Event)
		}
		n.DecidedBy = RefundActor{UserID: ch.By.UserID, Email: ch.By.Email} // a person, whichever client
	case RefundSend:
		n.Payout = ch.Payout
	case RefundSettle:
		if ch.SettledBy == 0 {
			return nil, Errorf(EINVALID, "a settlement names its outgoing transfer")
		}
		n.SettledTransactionID = ch.SettledBy
	case RefundFail:
		n.FailureReason = strings.TrimSpace(ch.Reason)
		if n.FailureReason == "" {
			n.FailureReason = "the payout was refused"
		}
	}
	return &n, nil
}

// refundCan says what a refund in status may still do, for error messages.
func refundCan(status string) string {
	var can []string
	for _, e := range []RefundEvent{RefundApprove, RefundReject, RefundCancel} {
		if RefundAllows(status, e) {
			can = append(can, string(e))
		}
	}
	if len(can) == 0 {
		switch status {
		case RefundProcessing:
			return "its money is on its way"
		case RefundSucceeded:
			return "its money has left"
		}
		return "it is final"
	}
	return "it can " + strings.Join(can, ", ")
}

// Refund references: "HT" and RefundReferenceLen characters of
// RefundReferenceAlphabet (digits and capitals without I and O, which read
// as 1 and 0), e.g. HT7K2M9QX4PA.
const (
	RefundReferencePrefix   = "HT"
	RefundReferenceLen      = 10
	RefundReferenceAlphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
)

// NewRefundReference draws a reference from random (the store's injected
// source), uniformly by rejection sampling. random must not fail.
func NewRefundReference(random io.Reader) string {
	const n = len(RefundReferenceAlphabet)
	limit := 256 - 256%n
	out := make([]byte, 0, len(RefundReferencePrefix)+RefundReferenceLen)
	out = append(out, RefundReferencePrefix...)
	var b [1]byte
	for len(out) < cap(out) {
		if _, err := io.ReadFull(random, b[:]); err != nil {
			panic(err) // crypto/rand.Read never returns an error (Go 1.24)
		}
		if int(b[0]) < limit {
			out = append(out, RefundReferenceAlphabet[int(b[0])%n])
		}
	}
	return string(out)
}

// MaxMemoReferences bounds the references RefundReferences returns of one memo.
const MaxMemoReferences = 4

// RefundReferences returns what in a memo may be a refund reference: every
// "HT" (any case) followed by RefundReferenceLen characters of the alphabet
// (any case), upper-cased, at most MaxMemoReferences, in memo order. Banks
// add their own text around a memo, with or without spaces, so nothing
// bounds a reference but its own length; the store looks the candidates up.
func RefundReferences(memo string) []string {
	var out []string
	for i := 0; i+2+RefundReferenceLen <= len(memo) && len(out) < MaxMemoReferences; i++ {
		if memo[i]|0x20 != 'h' || memo[i+1]|0x20 != 't' {
			continue
		}
		cand := strings.ToUpper(memo[i : i+2+RefundReferenceLen])
		if strings.Trim(cand[2:], RefundReferenceAlphabet) == "" && !slices.Contains(out, cand) {
			out = append(out, cand)
		}
	}
	return out
}

// Settlement outcomes of an outgoing transfer carrying a refund's reference
// (SettleRefund).
const (
	// RefundSettled: the transfer settles the refund.
	RefundSettled = "settled"
	// RefundTransferException: the transfer settles nothing and is queued
	// for a person (ExceptionRefundTransfer), with the reason.
	RefundTransferException = "exception"
)

// SettleRefund decides what an outgoing transfer (on bankAccountID, of
// amountOut VND, transaction transactionID) whose memo carries r's reference
// does to r (docs/api-v2.md, How a refund settles): it settles a pending or
// processing refund of the same amount sent from the refund's account;
// anything else is an exception for a person, with the sentence saying why
// (a second transfer of a settled refund, a refund cancelled, rejected,
// failed or still waiting for approval, another amount, another account).
func SettleRefund(r *Refund, transactionID, bankAccountID, amountOut int64) (outcome, reason string) {
	switch {
	case r.Status == RefundSucceeded && r.SettledTransactionID == transactionID:
		return "", "" // the same transfer again: nothing to do
	case r.Status == RefundSucceeded:
		return RefundTransferException, MatchReason{Kind: ReasonRefundTwice, Ref: r.Reference, Other: r.SettledTransactionID, Paid: amountOut}.English()
	case r.Status == RefundPendingApproval:
		return RefundTransferException, MatchReason{Kind: ReasonRefundWaiting, Ref: r.Reference, Paid: amountOut}.English()
	case r.Status != RefundPending && r.Status != RefundProcessing:
		return RefundTransferException, MatchReason{Kind: ReasonRefundState, Ref: r.Reference, State: r.Status, Paid: amountOut}.English()
	case amountOut != r.Amount:
		return RefundTransferException, MatchReason{Kind: ReasonRefundAmount, Ref: r.Reference, Amount: r.Amount, Paid: amountOut}.English()
	case bankAccountID != r.BankAccountID:
		return RefundTransferException, MatchReason{Kind: ReasonRefundAccount, Ref: r.Reference, Amount: r.BankAccountID, Other: bankAccountID}.English()
	}
	return RefundSettled, ""
}

// RefundInstructions tell the merchant what to send when no payout
// connector sends a refund (docs/api-v2.md, How a refund settles): from
// which account, to whom, how much, with which memo, and a VietQR of the
// receiver's account that a banking app scans.
type RefundInstructions struct {
	BankAccountID int64
	Receiver      RefundReceiver
	Amount        int64
	Memo          string
	// QR is the VietQR payload (recon.VietQR), "" when the receiver's
	// details do not fit one.
	QR string
}

// InstructionsOf returns what the merchant sends for r, or nil when r is
// not waiting for its money to leave by hand (a payout connector took it,
// or it is not pending).
func InstructionsOf(r *Refund) *RefundInstructions {
	if r.Status != RefundPending || r.Payout != "" {
		return nil
	}
	in := &RefundInstructions{BankAccountID: r.BankAccountID, Receiver: r.Receiver, Amount: r.Amount, Memo: r.Reference}
	if qr, err := (VietQR{BIN: r.Receiver.BankBIN, Account: r.Receiver.AccountNumber, Amount: r.Amount, Purpose: r.Reference}).Payload(); err == nil {
		in.QR = qr
	}
	return in
}

// RefundIPNDelivery builds the outbox row of a REFUND_SUCCEEDED or
// REFUND_FAILED IPN about r (docs/api-v2.md, Notifications), in the §2.8
// body of IPNDelivery: order is the refund's order as it is now (nil when
// the refund draws on a transaction that paid none: the order's fields are
// empty), customer its customer; transaction is the refund: id the refund's
// id, transaction_id its reference (what the bank statement shows),
// transaction_type REFUND, transaction_status APPROVED when the money left
// (REFUND_SUCCEEDED) or FAILED, transaction_amount the refund's amount,
// transaction_date date as its wall clock reads (the business time zone:
// the outgoing transfer's date for a settlement, as ORDER_PAID carries the
// paying transfer's; the moment of the failure in the business zone for a
// failure). at is when the notification is made (its timestamp).
func RefundIPNDelivery(r *Refund, o *Order, event string, date, at time.Time) (*Delivery, error) {
	status := "APPROVED"
	switch event {
	case IPNRefundSucceeded:
	case IPNRefundFailed:
		status = "FAILED"
	default:
		return nil, fmt.Errorf("recon: unknown refund IPN event %q", event)
	}
	body := ipnBody{
		Timestamp:        at.Unix(),
		NotificationType: event,
		Order:            ipnOrder{CustomData: json.RawMessage("[]"), CustomDataSigned: true, OrderCurrency: "VND"},
		Transaction: ipnTransaction{
			ID: r.ID, PaymentMethod: "BANK_TRANSFER", TransactionID: r.Reference, TransactionType: "REFUND",
			TransactionDate: date.Format(DateTimeLayout), TransactionStatus: status, TransactionAmount: MoneyText(r.Amount),
			TransactionCurrency: "VND", AuthenticationStatus: "AUTHENTICATION_NOT_NEEDED",
		},
	}
	if o != nil {
		custom := json.RawMessage(o.CustomData)
		if !json.Valid(custom) {
			custom = json.RawMessage("[]")
		}
		body.Order = ipnOrder{
			ID: strconv.FormatInt(o.ID, 10), OrderID: o.OrderID, OrderStatus: o.Status, OrderCurrency: o.Currency,
			OrderAmount: MoneyText(o.Amount), OrderInvoiceNumber: o.InvoiceNumber, CustomData: custom,
			CustomDataSigned: o.CustomDataSigned, UserAgent: o.UserAgent, IPAddress: o.IPAddress, OrderDescription: o.Description,
		}
		body.Customer = ipnCustomer{ID: o.CustomerID, CustomerID: o.CustomerID}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: r.CompanyID, Kind: DeliveryIPN, OrderID: r.OrderID, Event: event, Payload: payload}, nil
}

// PayoutConnector sends a refund's money from the company's bank account
// through the bank (docs/api-v2.md, How a refund settles). There is one per
// bank that offers payouts; the sandbox has one (refunds.Sandbox). The
// refunds service marks a refund processing and calls Send, which hands it
// over and returns; the money leaving is seen, as for a refund sent by
// hand, by ingestion, which settles it. A payout the bank refuses later is
// reported by the connector through the refunds service (Service.Fail: the
// refund fails, its amount refundable again).
type PayoutConnector interface {
	// Name is what Refund.Payout records, e.g. "sandbox".
	Name() string
	// Send hands r (processing) over. An error means the connector
	// refused it: the refund fails with the error's message.
	Send(ctx context.Context, tenant TenantID, r *Refund) error
}

// RefundFilter selects a tenant's refunds (GET /v2/refunds). Zero values
// mean no filter.
type RefundFilter struct {
	OrderID       int64
	TransactionID int64 // refunds drawing on it or requested for it
	Status        string
	// From and To are whole days of created_at, YYYY-MM-DD, inclusive, in
	// Location (UTC when nil).
	From, To      string
	Location      *time.Location
	Page, PerPage int
}

// RefundStore stores refunds (docs/api-v2.md, Refunds). Every method is
// scoped to one tenant: another tenant's refund, order or transaction is
// ENOTFOUND. Settlement has no method: ingestion settles refunds in its
// database transaction (TransactionStore.IngestTransactions).
type RefundStore interface {
	// CreateRefund stores a new refund for in, under the locks that keep
	// refunds within what came in (its transactions' bank accounts, then
	// the order): the rules are NewRefund's, the id and reference drawn by
	// the store. The order's RefundedAmount grows by the amount.
	CreateRefund(ctx context.Context, tenant TenantID, in *RefundRequest, now time.Time) (*Refund, error)
	// Refund returns the tenant's refund with its allocations.
	Refund(ctx context.Context, tenant TenantID, id string) (*Refund, error)
	// Refunds returns one page of the tenant's refunds, newest first, and the total.
	Refunds(ctx context.Context, tenant TenantID, f RefundFilter) ([]*Refund, int64, error)
	// ChangeRefund applies NextRefund under lock and writes the result; a
	// change that frees the amount (reject, cancel, fail) lowers the
	// order's RefundedAmount; a fail enqueues REFUND_FAILED for a target
	// that subscribes, in the same database transaction.
	ChangeRefund(ctx context.Context, tenant TenantID, id string, ch RefundChange, now time.Time) (*Refund, error)
	// Refundable returns what may still be refunded of the tenant's order
	// (orderID) or transaction (transactionID): RefundPlan.Refundable.
	Refundable(ctx context.Context, tenant TenantID, orderID, transactionID int64) (int64, error)
	// RefundApprovalThreshold returns the company's refund approval
	// threshold in VND, 0 when none (a test tenant reads its company's).
	RefundApprovalThreshold(ctx context.Context, tenant TenantID) (int64, error)
	// SetRefundApprovalThreshold sets it (0: none) for the company of the
	// tenant, both modes.
	SetRefundApprovalThreshold(ctx context.Context, tenant TenantID, vnd int64) error
	// PayoutsDue returns refunds of every tenant that the payout connector
	// named took (processing) at or before before, oldest first, at most
	// limit, with their tenants.
	PayoutsDue(ctx context.Context, payout string, before time.Time, limit int) ([]*Refund, []TenantID, error)
}
