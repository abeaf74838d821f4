package recon

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Exception kinds: the incoming transfers that matching could not settle and
// a person must look at (issue 11, exceptions queue). The kinds are the match
// outcomes of the transfer's decision (docs/design.md, D5).
const (
	// ExceptionUnmatched: a code or virtual account naming no order, or a
	// credit with neither to an account that receives order payments.
	ExceptionUnmatched = MatchNone
	// ExceptionUnderpaid: paid into an open order, which is still short.
	ExceptionUnderpaid = MatchUnderpaid
	// ExceptionOverpaid: completed an order with more than its amount.
	ExceptionOverpaid = MatchOverpaid
	// ExceptionDuplicate: named an order already paid or cancelled; nothing
	// was applied.
	ExceptionDuplicate = MatchDuplicate
	// ExceptionRefundTransfer: an outgoing transfer carrying a refund's
	// reference that settled nothing (SettleRefund): a second transfer of a
	// refund already settled, the transfer of a refund cancelled, rejected,
	// failed or waiting for approval, or of another amount or account
	// (docs/api-v2.md, How a refund settles). Only ignoring resolves it:
	// the person deals with the bank.
	ExceptionRefundTransfer = "refund_transfer"
	// ExceptionVAInactive: sent to an expired or cancelled virtual account
	// of API v2; nothing was applied, no order changed.
	ExceptionVAInactive = MatchVAInactive
)

// ExceptionKinds lists every kind.
var ExceptionKinds = []string{ExceptionUnmatched, ExceptionUnderpaid, ExceptionOverpaid, ExceptionDuplicate, ExceptionRefundTransfer, ExceptionVAInactive, ExceptionPossibleDuplicate}

// IsException reports whether a match outcome makes its transfer an exception.
func IsException(outcome string) bool { return slices.Contains(ExceptionKinds, outcome) }

// NoCodeReason is the reason of an unmatched exception whose memo holds no
// payment code and whose transfer names no virtual account.
const NoCodeReason = "no payment code or virtual account: a credit to an account that receives order payments"

// Resolutions: what a person decided about an exception.
const (
	// ResolveMatch applies the transfer to an open order, as an automatic
	// match would have (recon.MatchPayments, capture, ORDER_PAID IPN).
	ResolveMatch = "match"
	// ResolveRefund sends the money back to the payer. With a receiver
	// (ResolveInput.Receiver) it creates a refund of the transfer
	// (docs/api-v2.md, Refunds), of ResolveInput.Amount (0: everything
	// refundable), requested by the person resolving, the note its reason,
	// in the resolution's database transaction: a refund the rules refuse
	// (already refunded, ...) records no resolution. The bank data never
	// says whose account the money came from, so without a receiver there is
	// nowhere to send it: the resolution records that the money went back
	// outside Recon, as before API v2 (no refund, nothing held).
	ResolveRefund = "refund"
	// ResolveIgnore closes the exception with a note and nothing else.
	ResolveIgnore = "ignore"
	// ResolveWriteOff closes an underpaid exception by writing off what its
	// order still lacks: the order becomes paid (captured) with the
	// transfers' paid amount, the shortfall is recorded on the resolution
	// (ExceptionResolution.Amount), and the ORDER_PAID IPN goes out as for
	// any paid order (docs/api.md, Exceptions queue).
	ResolveWriteOff = "write_off"
	// ResolveAskRemainder asks the payer of an underpaid exception's order
	// for what is left: a new virtual account of the order (API v2's orders
	// service, exact mode: the remainder) whose number and VietQR the
	// merchant sends the payer. It is a decision that keeps the exception
	// open (Closes): the payer may pay, or not, and the person then ignores
	// or writes off.
	ResolveAskRemainder = "ask_remainder"
	// ResolveDuplicate says a possible duplicate is the same transfer as
	// the row it names: it stays out of totals, balances and matching for
	// good (docs/statements.md, Possible duplicates).
	ResolveDuplicate = "duplicate"
	// ResolveDistinct says a possible duplicate is a transfer of its own:
	// it enters balances and totals in date order and is matched then, as
	// if it had just arrived; when matching leaves it an exception of
	// another kind (unmatched, ...) the exception stays open as that kind.
	ResolveDistinct = "distinct"
)

// ResolveActions lists every resolution action.
var ResolveActions = []string{ResolveMatch, ResolveRefund, ResolveIgnore, ResolveWriteOff, ResolveAskRemainder, ResolveDuplicate, ResolveDistinct}

// ForDuplicate reports whether the action is one for a possible
// duplicate (ResolveDuplicate, ResolveDistinct).
func ForDuplicate(action string) bool { return action == ResolveDuplicate || action == ResolveDistinct }

// BulkResolveActions are the actions one confirmation may apply to several
// exceptions at once: those that need no order or receiver of their own.
var BulkResolveActions = []string{ResolveIgnore, ResolveRefund, ResolveWriteOff}

// MaxBulkResolve bounds the exceptions of one bulk resolution.
const MaxBulkResolve = 100

// Closes reports whether a decision closes its exception: every action but
// ResolveAskRemainder, which is kept in the history while the exception
// stays open.
func Closes(action string) bool { return action != ResolveAskRemainder }

// ForUnderpaid reports whether the action is one for an underpaid order's
// remainder (ResolveWriteOff, ResolveAskRemainder).
func ForUnderpaid(action string) bool {
	return action == ResolveWriteOff || action == ResolveAskRemainder
}

// Remainder is what the order still lacks: its amount less what transfers
// paid toward it (0 when paid in full or more).
func Remainder(o *Order) int64 { return max(o.Amount-o.PaidAmount, 0) }

// Overpayment is what a transfer of amount would pay beyond what the open
// order o still lacks (0 when it does not exceed it): the overpaid part a
// manual match would leave for a refund. An amount that would overflow is
// all overpaid.
func Overpayment(amount int64, o *Order) int64 {
	total, ok := AddAmounts(o.PaidAmount, amount)
	if !ok {
		return amount
	}
	return max(total-o.Amount, 0)
}

// MaxResolutionNote bounds a resolution's note, in bytes.
const MaxResolutionNote = 500

// Exception is an incoming transaction in the exceptions queue.
type Exception struct {
	Transaction *Transaction
	Kind        string // one of ExceptionKinds
	// OrderID is the order the transfer's decision names (0 when unmatched).
	OrderID int64
	// Reason is the sentence of the transfer's match decision.
	Reason string
	// Resolution is the person's decision that closed it, nil while the
	// exception is open.
	Resolution *ExceptionResolution
	// Order is the order OrderID names as it is now (ExceptionStore.Exception
	// only; nil in a listing, or when it is gone).
	Order *Order
	// Decisions are every decision a person made about it, oldest first,
	// the closing one last, superseded ones kept (ExceptionStore.Exception
	// only; nil in a listing).
	Decisions []*ExceptionResolution
}

// ExceptionResolution is the auditable record of one manual decision: who
// (a user of the company), when, why, what it did, and the state before it.
type ExceptionResolution struct {
	ID            int64
	CompanyID     int64
	TransactionID int64
	Action        string // one of ResolveActions
	// OrderID is the order a match applied the transfer to (0 otherwise).
	OrderID   int64
	Note      string
	UserID    int64
	UserEmail string
	CreatedAt time.Time
	// PreviousKind and PreviousReason are the exception as it was.
	PreviousKind, PreviousReason string
	// OrderStatusBefore and OrderPaidBefore are the matched order's status
	// and paid amount before the match ("" and 0 for other actions).
	OrderStatusBefore string
	OrderPaidBefore   int64
	// Decision is the match decision a match recorded (nil for other actions).
	Decision *MatchDecision
	// RefundID is the refund a refund resolution created ("" otherwise).
	RefundID string
	// Amount is what a write-off wrote off, or what an ask for the
	// remainder asked for (0 for other actions).
	Amount int64
	// VANumber is the virtual account an ask for the remainder added to
	// the order ("" otherwise).
	VANumber string
	// Closes: the decision closed the exception (Closes(Action)).
	Closes bool
}

// ResolveInput is a request to resolve an exception.
type ResolveInput struct {
	Action  string
	OrderID int64 // ResolveMatch only
	Note    string
	// Amount and Receiver are the refund's (ResolveRefund only): Amount 0
	// refunds everything refundable of the transfer.
	Amount   int64
	Receiver RefundReceiver
	// VA is the virtual account an ask for the remainder added to the
	// order (ResolveAskRemainder only, where it is required): AskRemainder
	// sets it, no caller types it.
	VA *VirtualAccount
}

// Validate checks the input before anything is read: an action of
// ResolveActions, an order for a match and only then, and a note of 1 to
// MaxResolutionNote bytes of text. The note is trimmed.
func (in *ResolveInput) Validate() error {
	if !slices.Contains(ResolveActions, in.Action) {
		return FieldError("action", "action must be one of %s", strings.Join(ResolveActions, ", "))
	}
	switch {
	case in.Action == ResolveMatch && in.OrderID <= 0:
		return FieldError("order_id", "order_id is required to match: the id of an open order")
	case in.Action != ResolveMatch && in.OrderID != 0:
		return FieldError("order_id", "order_id is only for action match, not %s", in.Action)
	case in.Action != ResolveRefund && (in.Amount != 0 || in.Receiver.Known()):
		return FieldError("receiver", "amount and receiver are only for action refund, not %s", in.Action)
	case in.Amount < 0 || in.Amount > MaxAmount:
		return FieldError("amount", "amount must be a whole number of VND from 1 to %d (leave it out to refund everything refundable)", int64(MaxAmount))
	case in.Amount != 0 && !in.Receiver.Known():
		return FieldError("receiver", "an amount needs a receiver: without one the refund is only a record that the money went back outside Recon")
	case (in.Action == ResolveAskRemainder) != (in.VA != nil):
		return FieldError("action", "an ask for the remainder is made with the virtual account it asks through, and only it")
	}
	if in.Receiver.Known() {
		if err := in.Receiver.Validate(); err != nil {
			return err
		}
	}
	in.Note = strings.TrimSpace(in.Note)
	switch {
	case in.Note == "":
		return FieldError("note", "note is required: say why")
	case len(in.Note) > MaxResolutionNote:
		return FieldError("note", "note must be at most %d bytes, not %d", MaxResolutionNote, len(in.Note))
	}
	if bad := BadText(in.Note, true); bad != "" {
		return FieldError("note", "note %s", bad)
	}
	return nil
}

// CheckResolution applies the rules of a resolution to the exception as it
// is (read under lock) and, for a match, the order: the exception must be
// open; a match needs a transfer not yet applied to any order (unmatched,
// duplicate: an underpaid or overpaid one already counts in its order) and
// an order awaiting payment. A write-off or an ask for the remainder needs
// an underpaid exception and o, the order it names, still awaiting payment
// and short (CheckRemainder). Violations are ECONFLICT naming the state.
func CheckResolution(e *Exception, in *ResolveInput, o *Order) error {
	if r := e.Resolution; r != nil {
		return Errorf(ECONFLICT, "transaction %d is already resolved (%s by %s at %s)", e.Transaction.ID, r.Action, r.UserEmail, r.CreatedAt.UTC().Format(time.RFC3339))
	}
	if (e.Kind == ExceptionPossibleDuplicate) != ForDuplicate(in.Action) {
		if ForDuplicate(in.Action) {
			return Errorf(ECONFLICT, "transaction %d is %s, not a possible duplicate: %s is only for possible duplicates", e.Transaction.ID, e.Kind, in.Action)
		}
		return Errorf(ECONFLICT, "transaction %d is a possible duplicate of transaction %d: resolve it as duplicate or distinct", e.Transaction.ID, e.Transaction.DupOf)
	}
	if e.Kind == ExceptionRefundTransfer && in.Action != ResolveIgnore {
		return Errorf(ECONFLICT, "transaction %d is money that went out with a refund's reference: it can only be ignored, once dealt with at the bank", e.Transaction.ID)
	}
	if ForUnderpaid(in.Action) {
		return CheckRemainder(e, o)
	}
	if in.Action != ResolveMatch {
		return nil
	}
	if e.Kind == ExceptionUnderpaid || e.Kind == ExceptionOverpaid {
		return Errorf(ECONFLICT, "transaction %d is already applied to order %d (%s): refund or ignore it instead", e.Transaction.ID, e.OrderID, e.Kind)
	}
	if o == nil {
		return Errorf(ENOTFOUND, "order %d not found", in.OrderID)
	}
	switch {
	case o.Status == OrderCaptured:
		return Errorf(ECONFLICT, "order %d (%s) is already paid", o.ID, o.InvoiceNumber)
	case !o.VoidedAt.IsZero():
		return Errorf(ECONFLICT, "order %d (%s) is voided", o.ID, o.InvoiceNumber)
	case o.Status == OrderCancelled:
		return Errorf(ECONFLICT, "order %d (%s) is cancelled", o.ID, o.InvoiceNumber)
	case o.Status != OrderAwaitingPayment:
		return Errorf(ECONFLICT, "order %d (%s) is %s, not awaiting payment", o.ID, o.InvoiceNumber, o.Status)
	}
	return nil
}

// CheckRemainder checks that the underpaid exception e's order o (the one
// it names, nil when gone) still lacks something that may be written off
// or asked for: e underpaid, o awaiting payment, not voided, short.
func CheckRemainder(e *Exception, o *Order) error {
	if e.Kind != ExceptionUnderpaid {
		return Errorf(ECONFLICT, "transaction %d is %s, not underpaid: only an underpaid order's remainder is written off or asked for", e.Transaction.ID, e.Kind)
	}
	if o == nil || o.ID != e.OrderID {
		return Errorf(ENOTFOUND, "order %d not found", e.OrderID)
	}
	switch {
	case o.Status == OrderCaptured:
		return Errorf(ECONFLICT, "order %d (%s) is already paid: nothing is left; ignore the exception", o.ID, o.InvoiceNumber)
	case !o.VoidedAt.IsZero():
		return Errorf(ECONFLICT, "order %d (%s) is voided", o.ID, o.InvoiceNumber)
	case o.Status == OrderCancelled:
		return Errorf(ECONFLICT, "order %d (%s) is cancelled", o.ID, o.InvoiceNumber)
	case o.Status != OrderAwaitingPayment:
		return Errorf(ECONFLICT, "order %d (%s) is %s, not awaiting payment", o.ID, o.InvoiceNumber, o.Status)
	case Remainder(o) == 0:
		return Errorf(ECONFLICT, "order %d (%s) lacks nothing", o.ID, o.InvoiceNumber)
	}
	return nil
}

// WriteOff is the order o as a write-off of its remainder leaves it at now:
// captured (paid) with the paid amount the transfers brought, paid at now,
// by the transfer transactionID (the underpaid one); and the amount
// written off. o must have passed CheckRemainder.
func WriteOff(o *Order, transactionID int64, now time.Time) (*Order, int64) {
	paid := *o
	paid.Status, paid.PaidAt, paid.PaidTransactionID, paid.UpdatedAt = OrderCaptured, now, transactionID, now
	return &paid, Remainder(o)
}

// GetsSuggestions reports whether the exception is offered orders to be
// matched to (ExceptionStore.ExceptionSuggestions): an open exception whose
// transfer no order counts yet, unmatched, duplicate or va_inactive. An underpaid or
// overpaid transfer already counts in its order (CheckResolution refuses to
// match it), a refund_transfer is outgoing money, which pays no order, and a
// resolved exception is closed.
func (e *Exception) GetsSuggestions() bool {
	return e.Resolution == nil && (e.Kind == ExceptionUnmatched || e.Kind == ExceptionDuplicate || e.Kind == ExceptionVAInactive)
}

// ExceptionFilter selects exceptions. Zero values mean "no filter".
type ExceptionFilter struct {
	Kind          string
	BankAccountID int64
	// FromDate and ToDate are whole days of transaction_date, inclusive, YYYY-MM-DD.
	FromDate, ToDate string
	Resolved         bool // list resolved exceptions instead of open ones
	// Memo is text the transfer's memo contains (parameter q), compared
	// without case, and also after NormalizeMemo (no diacritics), at most
	// MaxMemoSearch characters.
	Memo string
	// After is the transaction id of the last item of the previous page
	// (keyset pagination, newest first); 0 for the first page.
	After int64
	Limit int
}

// Suggestion is an open order that may be the one an exception's transfer
// was meant for, and why.
type Suggestion struct {
	Order *Order
	// Reasons: SuggestSameAmount, SuggestSimilarCode, SuggestSameCustomer.
	Reasons []string
}

// Why an order is suggested.
const (
	SuggestSameAmount   = "same_amount"   // its outstanding amount is the transfer's
	SuggestSimilarCode  = "similar_code"  // its code is one edit from the transfer's, or the same suffix under another prefix (SimilarCodes)
	SuggestSameCustomer = "same_customer" // its customer is the customer of the order the transfer named
)

// MaxSuggestions bounds the suggestions of one exception.
const MaxSuggestions = 10

// SimilarCodes returns the codes similar to code under the company's
// formats: with the format whose prefix code starts with, its suffix one
// edit away (a character replaced, removed, inserted, or two neighbours
// swapped, over the format's characters, 0-9 or 0-9A-Z, at a length the
// format allows), and the same suffix under each other format's prefix that
// allows it. code itself is not among them. Codes are upper-case.
func SimilarCodes(code string, formats []PaymentCodeFormat) []string {
	code = strings.ToUpper(code)
	seen := map[string]bool{code: true}
	var out []string
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	fits := func(f PaymentCodeFormat, suffix string) bool {
		if len(suffix) < f.SuffixFrom || len(suffix) > f.SuffixTo {
			return false
		}
		return f.CharacterType == NumberAndLetter && strings.Trim(suffix, codeLetters+codeDigits) == "" ||
			strings.Trim(suffix, codeDigits) == ""
	}
	for _, f := range formats {
		prefix := strings.ToUpper(f.Prefix)
		suffix, ok := strings.CutPrefix(code, prefix)
		if !ok || prefix == "" || !fits(f, suffix) {
			continue
		}
		alphabet := codeDigits
		if f.CharacterType == NumberAndLetter {
			alphabet += codeLetters
		}
		edit := func(s string) {
			if fits(f, s) {
				add(prefix + s)
			}
		}
		for i := 0; i <= len(suffix); i++ {
			for j := 0; j < len(alphabet); j++ {
				edit(suffix[:i] + alphabet[j:j+1] + suffix[i:]) // insert
				if i < len(suffix) {
					edit(suffix[:i] + alphabet[j:j+1] + suffix[i+1:]) // replace
				}
			}
			if i < len(suffix) {
				edit(suffix[:i] + suffix[i+1:]) // remove
			}
			if i+1 < len(suffix) {
				edit(suffix[:i] + suffix[i+1:i+2] + suffix[i:i+1] + suffix[i+2:]) // swap
			}
		}
		for _, g := range formats {
			if fits(g, suffix) && g.Prefix != "" {
				add(strings.ToUpper(g.Prefix) + suffix)
			}
		}
	}
	return out
}

const (
	codeDigits  = "0123456789"
	codeLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// RankSuggestions orders suggestions by how many reasons they have, then
// newest order first, and keeps at most MaxSuggestions.
func RankSuggestions(s []*Suggestion) []*Suggestion {
	slices.SortStableFunc(s, func(a, b *Suggestion) int {
		if len(a.Reasons) != len(b.Reasons) {
			return len(b.Reasons) - len(a.Reasons)
		}
		switch {
		case a.Order.ID > b.Order.ID:
			return -1
		case a.Order.ID < b.Order.ID:
			return 1
		}
		return 0
	})
	return s[:min(len(s), MaxSuggestions)]
}

// ExceptionTotal is how many exceptions of a kind ("" in ExceptionTotals.All:
// every kind) a filter selects and the sum of their transfers' amounts.
type ExceptionTotal struct {
	Kind          string
	Count, Amount int64
}

// ExceptionTotals are the queue's totals: per kind, in ExceptionKinds'
// order (kinds with none left out), and over all.
type ExceptionTotals struct {
	Kinds []ExceptionTotal
	All   ExceptionTotal
}

// SumExceptionTotals orders the kinds' totals and adds them up, with
// checked arithmetic.
func SumExceptionTotals(kinds []*ExceptionTotal) (*ExceptionTotals, error) {
	out := &ExceptionTotals{}
	for _, k := range ExceptionKinds {
		for _, t := range kinds {
			if t.Kind != k || t.Count == 0 {
				continue
			}
			out.Kinds = append(out.Kinds, *t)
			sum, ok := AddAmounts(out.All.Amount, t.Amount)
			if !ok {
				return nil, Errorf(EINTERNAL, "the exceptions' total overflows")
			}
			out.All.Count, out.All.Amount = out.All.Count+t.Count, sum
		}
	}
	return out, nil
}

// ExceptionStore stores the exceptions queue. Ingestion records exceptions
// (IngestTransactions, in its database transaction); this is how they are
// read and resolved. Every method is scoped to one tenant: another tenant's
// transaction is ENOTFOUND.
type ExceptionStore interface {
	// Exceptions lists one page of the tenant's exceptions, newest
	// transaction first, and whether more follow.
	Exceptions(ctx context.Context, tenant TenantID, f ExceptionFilter) ([]*Exception, bool, error)
	// ExceptionTotals counts the exceptions the filter selects (its After
	// and Limit aside) and sums their transfers' amounts, per kind.
	ExceptionTotals(ctx context.Context, tenant TenantID, f ExceptionFilter) (*ExceptionTotals, error)
	// Exception returns the exception of the tenant's transaction, with its
	// resolution, every decision about it (Decisions) and the order it
	// names (Order); ENOTFOUND when the transaction is not (or not the
	// tenant's) an exception.
	Exception(ctx context.Context, tenant TenantID, transactionID int64) (*Exception, error)
	// ExceptionSuggestions returns, for each exception of the list (a page),
	// the open orders that may be the one its transfer was meant for (see
	// Suggestion), ranked by RankSuggestions; formats are the company's
	// payment-code formats. The work per reason does not grow with the
	// list's length in round trips (one statement per reason).
	ExceptionSuggestions(ctx context.Context, tenant TenantID, list []*Exception, formats []PaymentCodeFormat) ([][]*Suggestion, error)
	// ResolveException records by's resolution of the exception in one
	// database transaction, after CheckResolution under lock: a match
	// applies the transfer to the order as matching does (decision, order
	// state, ORDER_PAID IPN through the outbox when it captures); a
	// write-off captures the named order (WriteOff) with its ORDER_PAID
	// IPN; an ask for the remainder records the virtual account made for it
	// and leaves the exception open. Closing an exception twice, even
	// concurrently, gives one closing decision: the other call is
	// ECONFLICT.
	ResolveException(ctx context.Context, tenant TenantID, transactionID int64, in ResolveInput, by *User, now time.Time) (*ExceptionResolution, error)
}

// exceptionParams are the query parameters of the exceptions listing.
var exceptionParams = []string{"kind", "bank_account_id", "from_date", "to_date", "status", "limit", "after", "q"}

// ParseExceptionFilter reads the exceptions listing's query parameters
// strictly, as §4.3's are read (for the API, the CLI's flags aside, and the
// dashboard): an unknown or repeated parameter, or a value of the wrong
// form, is EINVALID naming it.
func ParseExceptionFilter(q url.Values) (ExceptionFilter, error) {
	f := ExceptionFilter{Limit: DefaultTransactionLimit}
	if err := CheckParams(q, exceptionParams); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		max  int64
		dst  func(int64)
	}{
		{"limit", MaxTransactionLimit, func(n int64) { f.Limit = int(n) }},
		{"bank_account_id", math.MaxInt64, func(n int64) { f.BankAccountID = n }},
		{"after", math.MaxInt64, func(n int64) { f.After = n }},
	} {
		if !q.Has(p.name) {
			continue
		}
		n, err := strconv.ParseInt(q.Get(p.name), 10, 64)
		if err != nil || n < 1 || n > p.max {
			return f, FieldError(p.name, "%s must be an integer from 1 to %d", p.name, p.max)
		}
		p.dst(n)
	}
	if q.Has("kind") {
		f.Kind = q.Get("kind")
		if !slices.Contains(ExceptionKinds, f.Kind) {
			return f, FieldError("kind", "kind must be one of %s", strings.Join(ExceptionKinds, ", "))
		}
	}
	if v := q.Get("status"); q.Has("status") && v != "open" {
		if v != "resolved" {
			return f, FieldError("status", "status must be open or resolved")
		}
		f.Resolved = true
	}
	if q.Has("q") {
		f.Memo = strings.TrimSpace(q.Get("q"))
		if utf8.RuneCountInString(f.Memo) > MaxMemoSearch {
			return f, FieldError("q", "q must be at most %d characters", MaxMemoSearch)
		}
		if bad := BadText(f.Memo, false); bad != "" {
			return f, FieldError("q", "q %s", bad)
		}
	}
	return f, ParseDateRange(q, &f.FromDate, &f.ToDate)
}

// SuggestStore is what Suggest needs of storage.
type SuggestStore interface {
	Company(ctx context.Context, id int64) (*Company, error)
	ExceptionSuggestions(ctx context.Context, tenant TenantID, list []*Exception, formats []PaymentCodeFormat) ([][]*Suggestion, error)
}

// Suggest returns the suggested orders of each exception (the tenant's
// payment-code formats read once), as the API, the CLI and the dashboard
// show them.
func Suggest(ctx context.Context, s SuggestStore, tenant TenantID, list []*Exception) ([][]*Suggestion, error) {
	co, err := s.Company(ctx, tenant.ID())
	if err != nil {
		return nil, err
	}
	return s.ExceptionSuggestions(ctx, tenant, list, co.Config.PaymentCodeFormats)
}

// HistoryEntry is one line of an exception's decision history: the
// exception as it was queued (Queued), an automatic or manual match decision
// (Decision), or a person's decision (Resolution).
type HistoryEntry struct {
	At         time.Time
	Queued     bool
	Kind       string // Queued: the kind the transfer was queued as
	Reason     string // Queued: its reason
	Decision   *MatchDecision
	Resolution *ExceptionResolution
}

// ExceptionHistory is every decision about the exception, oldest first:
// the match decisions of its transfer (decisions, as
// OrderStore.MatchDecisions returns them) and every decision a person made
// (e.Decisions, superseded ones kept). When no automatic decision is among
// the match decisions (an unmatched transfer has none stored: its decision
// is derived while nothing else is, and a manual match replaced it), the
// exception as queued stands for it, dated when the transfer was stored:
// the superseded "unmatched" decision stays in the history.
func ExceptionHistory(e *Exception, decisions []*MatchDecision) []HistoryEntry {
	var out []HistoryEntry
	automatic := slices.ContainsFunc(decisions, func(d *MatchDecision) bool { return d.Rule != MatchByHand })
	if !automatic {
		out = append(out, HistoryEntry{At: e.Transaction.CreatedAt, Queued: true, Kind: e.Kind, Reason: e.Reason})
	}
	for _, d := range decisions {
		out = append(out, HistoryEntry{At: d.CreatedAt, Decision: d})
	}
	for _, r := range e.Decisions {
		out = append(out, HistoryEntry{At: r.CreatedAt, Resolution: r})
	}
	slices.SortStableFunc(out, func(a, b HistoryEntry) int { return a.At.Compare(b.At) })
	return out
}

// ResolveStore is what AskRemainder and ResolveEach need of storage.
type ResolveStore interface {
	Exception(ctx context.Context, tenant TenantID, transactionID int64) (*Exception, error)
	ResolveException(ctx context.Context, tenant TenantID, transactionID int64, in ResolveInput, by *User, now time.Time) (*ExceptionResolution, error)
}

// VAIssuer adds and cancels an order's virtual accounts (orders.Service,
// API v2's orders service: docs/api-v2.md, Virtual accounts).
type VAIssuer interface {
	AddVA(ctx context.Context, tenant TenantID, id string, in VAInput) (*VirtualAccount, error)
	CancelVA(ctx context.Context, tenant TenantID, id, number string) (*VirtualAccount, error)
}

// AskRemainder asks the payer of an underpaid exception's order for what
// is left (ResolveAskRemainder): the rules checked on the order as it is
// (CheckResolution), a new virtual account of the order for the remainder
// (exact mode: POST /v2/orders/{id}/virtual-accounts' path, for a v1
// checkout order as for a v2 one), then the decision recorded with it. A
// decision the store refuses (the order paid meanwhile, ...) cancels the
// account it was made with, so no account asks for money nobody expects.
func AskRemainder(ctx context.Context, s ResolveStore, vas VAIssuer, tenant TenantID, transactionID int64, in ResolveInput, by *User, now time.Time) (*ExceptionResolution, error) {
	in.Action, in.VA = ResolveAskRemainder, &VirtualAccount{} // validated with a placeholder: the account comes last
	if err := in.Validate(); err != nil {
		return nil, err
	}
	e, err := s.Exception(ctx, tenant, transactionID)
	if err != nil {
		return nil, err
	}
	if err := CheckResolution(e, &in, e.Order); err != nil {
		return nil, err
	}
	if vas == nil {
		return nil, Errorf(EUNPROCESSABLE, "virtual accounts are not available on this server: the remainder cannot be asked for")
	}
	va, err := vas.AddVA(ctx, tenant, e.Order.PublicID, VAInput{AmountMode: VAExact})
	if err != nil {
		return nil, err
	}
	in.VA = va
	res, err := s.ResolveException(ctx, tenant, transactionID, in, by, now)
	if err != nil {
		if _, cerr := vas.CancelVA(ctx, tenant, e.Order.PublicID, va.Number); cerr != nil {
			return nil, Errorf(ErrorCode(err), "%s (and its virtual account %s could not be cancelled: %s)", ErrorMessage(err), va.Number, ErrorMessage(cerr))
		}
		return nil, err
	}
	return res, nil
}

// CheckBulk checks a bulk resolution before anything is read: an action of
// BulkResolveActions with its note (ResolveInput.Validate, which trims
// it), no amount or receiver, 1 to MaxBulkResolve exceptions, each once.
func CheckBulk(ids []int64, in *ResolveInput) error {
	if !slices.Contains(BulkResolveActions, in.Action) {
		return FieldError("action", "action must be one of %s for several exceptions at once", strings.Join(BulkResolveActions, ", "))
	}
	if in.Amount != 0 || in.Receiver.Known() {
		return FieldError("receiver", "a refund of several exceptions records that the money went back outside Recon: no amount or receiver")
	}
	switch {
	case len(ids) == 0:
		return FieldError("transaction_ids", "choose at least one exception")
	case len(ids) > MaxBulkResolve:
		return FieldError("transaction_ids", "at most %d exceptions at once, not %d", MaxBulkResolve, len(ids))
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			return FieldError("transaction_ids", "each exception once, by its transaction id: %d", id)
		}
		seen[id] = true
	}
	return in.Validate()
}

// BulkResult is what a bulk resolution did to one exception: its own
// decision, or why it was refused.
type BulkResult struct {
	TransactionID int64
	Resolution    *ExceptionResolution
	Err           error
}

// ResolveEach applies one decision (an action of BulkResolveActions and its
// note) to each of the exceptions, one by one: each gets its own decision
// record in its own database transaction, and one refused (already
// resolved, not underpaid for a write-off, ...) does not stop the others.
// At most MaxBulkResolve exceptions, each once; the input is checked
// before anything is done. each, when set, runs each exception's change
// (the surface's audit entry of it: Audited); nil runs it as it is.
func ResolveEach(ctx context.Context, s ResolveStore, tenant TenantID, ids []int64, in ResolveInput, by *User, now time.Time,
	each func(ctx context.Context, transactionID int64, change func(ctx context.Context) error) error) ([]BulkResult, error) {
	if err := CheckBulk(ids, &in); err != nil {
		return nil, err
	}
	out := make([]BulkResult, len(ids))
	for i, id := range ids {
		out[i].TransactionID = id
		change := func(ctx context.Context) (err error) {
			out[i].Resolution, err = s.ResolveException(ctx, tenant, id, in, by, now)
			return err
		}
		if each != nil {
			out[i].Err = each(ctx, id, change)
		} else {
			out[i].Err = change(ctx)
		}
		if ErrorCode(out[i].Err) == EINTERNAL {
			return out[:i+1], out[i].Err
		}
		if err := ctx.Err(); err != nil {
			return out[:i+1], err
		}
	}
	return out, nil
}
