package recon

import (
	"context"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
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
var ExceptionKinds = []string{ExceptionUnmatched, ExceptionUnderpaid, ExceptionOverpaid, ExceptionDuplicate, ExceptionRefundTransfer, ExceptionVAInactive}

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
)

// ResolveActions lists every resolution action.
var ResolveActions = []string{ResolveMatch, ResolveRefund, ResolveIgnore}

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
	// Resolution is the person's decision, nil while the exception is open.
	Resolution *ExceptionResolution
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
// an order awaiting payment. Violations are ECONFLICT naming the state.
func CheckResolution(e *Exception, in *ResolveInput, o *Order) error {
	if r := e.Resolution; r != nil {
		return Errorf(ECONFLICT, "transaction %d is already resolved (%s by %s at %s)", e.Transaction.ID, r.Action, r.UserEmail, r.CreatedAt.UTC().Format(time.RFC3339))
	}
	if e.Kind == ExceptionRefundTransfer && in.Action != ResolveIgnore {
		return Errorf(ECONFLICT, "transaction %d is money that went out with a refund's reference: it can only be ignored, once dealt with at the bank", e.Transaction.ID)
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

// ExceptionStore stores the exceptions queue. Ingestion records exceptions
// (IngestTransactions, in its database transaction); this is how they are
// read and resolved. Every method is scoped to one tenant: another tenant's
// transaction is ENOTFOUND.
type ExceptionStore interface {
	// Exceptions lists one page of the tenant's exceptions, newest
	// transaction first, and whether more follow.
	Exceptions(ctx context.Context, tenant TenantID, f ExceptionFilter) ([]*Exception, bool, error)
	// Exception returns the exception of the tenant's transaction, with its
	// resolution; ENOTFOUND when the transaction is not (or not the
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
	// state, ORDER_PAID IPN through the outbox when it captures). Resolving
	// an exception twice, even concurrently, gives one resolution: the
	// other call is ECONFLICT.
	ResolveException(ctx context.Context, tenant TenantID, transactionID int64, in ResolveInput, by *User, now time.Time) (*ExceptionResolution, error)
}

// exceptionParams are the query parameters of the exceptions listing.
var exceptionParams = []string{"kind", "bank_account_id", "from_date", "to_date", "status", "limit", "after"}

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
