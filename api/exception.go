package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"recon"
	"recon/web"
)

// The exceptions queue (issue 11): GET /api/v1/exceptions,
// GET /api/v1/exceptions/{id}, POST /api/v1/exceptions/{id}/resolve. {id} is
// the transaction's id.

type exceptionJSON struct {
	TransactionID int64            `json:"transaction_id"`
	Kind          string           `json:"kind"`
	Reason        string           `json:"reason"`
	OrderID       *int64           `json:"order_id"`
	Status        string           `json:"status"` // open or resolved
	Transaction   transactionJSON  `json:"transaction"`
	Suggestions   []suggestionJSON `json:"suggestions"`
	Resolution    *resolutionJSON  `json:"resolution"`
	Livemode      bool             `json:"livemode"`
	// MatchDecisions is the automatic and manual decision history (the
	// detail only).
	MatchDecisions []decisionJSON `json:"match_decisions,omitempty"`
}

type suggestionJSON struct {
	OrderID            int64    `json:"order_id"`
	OrderInvoiceNumber string   `json:"order_invoice_number"`
	OrderAmount        string   `json:"order_amount"`
	PaidAmount         string   `json:"paid_amount"`
	PaymentCode        string   `json:"payment_code"`
	CustomerID         string   `json:"customer_id"`
	CreatedAt          string   `json:"created_at"`
	Reasons            []string `json:"reasons"`
}

type resolutionJSON struct {
	ID            int64         `json:"id"`
	TransactionID int64         `json:"transaction_id"`
	Action        string        `json:"action"`
	OrderID       *int64        `json:"order_id"`
	Note          string        `json:"note"`
	ResolvedBy    resolverJSON  `json:"resolved_by"`
	ResolvedAt    string        `json:"resolved_at"`
	PreviousState previousJSON  `json:"previous_state"`
	Decision      *decisionJSON `json:"decision,omitempty"`
	// RefundID is the refund a refund resolution with a receiver created
	// (docs/api-v2.md, Refunds); absent otherwise.
	RefundID string `json:"refund_id,omitempty"`
	Livemode bool   `json:"livemode"`
}

type resolverJSON struct {
	UserID int64  `json:"user_id"`
	Email  string `json:"email"`
}

type previousJSON struct {
	Status          string  `json:"status"`
	Kind            string  `json:"kind"`
	Reason          string  `json:"reason"`
	OrderStatus     *string `json:"order_status,omitempty"`
	OrderPaidAmount *string `json:"order_paid_amount,omitempty"`
}

func optionalID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// ResolutionJSON renders a resolution, as the API and the CLI show it; loc
// is the business time zone.
func ResolutionJSON(r *recon.ExceptionResolution, loc *time.Location, livemode bool) *resolutionJSON {
	if r == nil {
		return nil
	}
	j := &resolutionJSON{ID: r.ID, TransactionID: r.TransactionID, Action: r.Action, OrderID: optionalID(r.OrderID), Note: r.Note,
		ResolvedBy: resolverJSON{r.UserID, r.UserEmail}, ResolvedAt: r.CreatedAt.In(loc).Format(recon.DateTimeLayout),
		PreviousState: previousJSON{Status: "open", Kind: r.PreviousKind, Reason: r.PreviousReason}, RefundID: r.RefundID, Livemode: livemode}
	if r.OrderStatusBefore != "" {
		paid := recon.MoneyText(r.OrderPaidBefore)
		j.PreviousState.OrderStatus, j.PreviousState.OrderPaidAmount = &r.OrderStatusBefore, &paid
	}
	if r.Decision != nil {
		d := toDecisionJSON(r.Decision, loc)
		j.Decision = &d
	}
	return j
}

// ExceptionJSON renders an exception with its suggestions, as the API and
// the CLI show it; loc is the business time zone.
func ExceptionJSON(e *recon.Exception, suggestions []*recon.Suggestion, loc *time.Location, livemode bool) exceptionJSON {
	j := exceptionJSON{TransactionID: e.Transaction.ID, Kind: e.Kind, Reason: e.Reason, OrderID: optionalID(e.OrderID), Status: "open",
		Transaction: toTransactionJSON(e.Transaction, livemode), Suggestions: make([]suggestionJSON, len(suggestions)),
		Resolution: ResolutionJSON(e.Resolution, loc, livemode), Livemode: livemode}
	if e.Resolution != nil {
		j.Status = "resolved"
	}
	for i, s := range suggestions {
		o := s.Order
		j.Suggestions[i] = suggestionJSON{o.ID, o.InvoiceNumber, recon.MoneyText(o.Amount), recon.MoneyText(o.PaidAmount), o.PaymentCode,
			o.CustomerID, o.CreatedAt.In(loc).Format(recon.DateTimeLayout), s.Reasons}
	}
	return j
}

// listExceptions: GET /api/v1/exceptions, newest first, keyset-paginated
// (after = the last transaction_id of the previous page), each exception
// with its suggested orders.
func (h *Handler) listExceptions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	f, err := recon.ParseExceptionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list, more, err := h.Store.Exceptions(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	suggestions, err := recon.Suggest(r.Context(), h.Store, c.Tenant, list)
	if err != nil {
		return err
	}
	data := make([]exceptionJSON, len(list))
	for i, e := range list {
		data[i] = ExceptionJSON(e, suggestions[i], h.location(), c.Livemode())
	}
	var next *int64
	if more {
		next = &list[len(list)-1].Transaction.ID
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Status string          `json:"status"`
		Data   []exceptionJSON `json:"data"`
		Meta   any             `json:"meta"`
	}{"success", data, map[string]any{"pagination": map[string]any{"per_page": f.Limit, "has_more": more, "next_after": next}}})
	return nil
}

// showException: GET /api/v1/exceptions/{id}, with its suggestions and its
// decision history (the match decisions and the resolution).
func (h *Handler) showException(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	e, err := h.Store.Exception(r.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	s, err := recon.Suggest(r.Context(), h.Store, c.Tenant, []*recon.Exception{e})
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(r.Context(), c.Tenant, 0, id)
	if err != nil {
		return err
	}
	j := ExceptionJSON(e, s[0], h.location(), c.Livemode())
	j.MatchDecisions = decisionsJSON(ds, h.location())
	web.WriteJSON(w, http.StatusOK, ok(j))
	return nil
}

// resolveException: POST /api/v1/exceptions/{id}/resolve with
// {"action":"match"|"refund"|"ignore","order_id":N,"note":TEXT}, and for a
// refund optionally "amount" and "receiver": {bank_bin, account_number,
// account_name}, which create a refund (docs/api-v2.md, Refunds); the
// caller's user is recorded as who decided.
func (h *Handler) resolveException(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var body struct {
		Action  *string      `json:"action"`
		OrderID *json.Number `json:"order_id"`
		Note    *string      `json:"note"`
		Amount  *int64       `json:"amount"`
		// Receiver makes a refund resolution create a refund.
		Receiver *struct {
			BankBIN       string `json:"bank_bin"`
			AccountNumber string `json:"account_number"`
			AccountName   string `json:"account_name"`
		} `json:"receiver"`
	}
	if err := web.DecodeJSON(r, &body); err != nil {
		return err
	}
	var in recon.ResolveInput
	if body.Action == nil {
		return recon.FieldError("action", "action is required: match, refund or ignore")
	}
	in.Action = *body.Action
	if body.OrderID != nil {
		n, err := strconv.ParseInt(body.OrderID.String(), 10, 64)
		if err != nil || n < 1 {
			return recon.FieldError("order_id", "order_id must be a positive integer: the id of an open order")
		}
		in.OrderID = n
	}
	if body.Note != nil {
		in.Note = *body.Note
	}
	if body.Amount != nil {
		if n := *body.Amount; n < 1 || n > recon.MaxAmount {
			return recon.FieldError("amount", "amount must be a whole number of VND from 1 to %d", int64(recon.MaxAmount))
		}
		in.Amount = *body.Amount
	}
	if b := body.Receiver; b != nil {
		in.Receiver = recon.RefundReceiver{BankBIN: b.BankBIN, AccountNumber: b.AccountNumber, AccountName: b.AccountName}
		if !in.Receiver.Known() {
			return recon.FieldError("receiver", "receiver needs bank_bin, account_number and account_name")
		}
	}
	if err := in.Validate(); err != nil {
		return err
	}
	var res *recon.ExceptionResolution
	err = h.audited(r, c, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, nil), func(ctx context.Context) (err error) {
		res, err = h.Store.ResolveException(ctx, c.Tenant, id, in, c.User, h.now())
		return err
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(ResolutionJSON(res, h.location(), c.Livemode())))
	return nil
}
