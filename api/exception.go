package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/web"
)

// The exceptions queue (issue 11): GET /api/v1/exceptions,
// GET /api/v1/exceptions/totals, GET /api/v1/exceptions/{id},
// POST /api/v1/exceptions/{id}/resolve and POST /api/v1/exceptions/resolve
// (several at once; issue 22). {id} is the transaction's id.

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
	// Decisions are every decision a person made about it, oldest first,
	// superseded ones kept (the detail only).
	Decisions []*resolutionJSON `json:"decisions,omitempty"`
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
	// Amount is what a write_off wrote off or an ask_remainder asked for;
	// VANumber the virtual account an ask_remainder added; absent
	// otherwise. Closes: the decision closed the exception (all but
	// ask_remainder).
	Amount   *string `json:"amount,omitempty"`
	VANumber string  `json:"va_number,omitempty"`
	Closes   bool    `json:"closes"`
	Livemode bool    `json:"livemode"`
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
		PreviousState: previousJSON{Status: "open", Kind: r.PreviousKind, Reason: r.PreviousReason}, RefundID: r.RefundID,
		VANumber: r.VANumber, Closes: r.Closes, Livemode: livemode}
	if r.Amount != 0 {
		a := recon.MoneyText(r.Amount)
		j.Amount = &a
	}
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
	for _, r := range e.Decisions {
		j.Decisions = append(j.Decisions, ResolutionJSON(r, h.location(), c.Livemode()))
	}
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
		return recon.FieldError("action", "action is required: %s", strings.Join(recon.ResolveActions, ", "))
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
	if in.Action != recon.ResolveAskRemainder {
		if err := in.Validate(); err != nil {
			return err
		}
	}
	var res *recon.ExceptionResolution
	err = h.audited(r, c, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, nil), func(ctx context.Context) (err error) {
		if in.Action == recon.ResolveAskRemainder {
			// A new virtual account for the remainder, then the decision.
			res, err = recon.AskRemainder(ctx, h.Store, h.VAs, c.Tenant, id, in, c.User, h.now())
		} else {
			res, err = h.Store.ResolveException(ctx, c.Tenant, id, in, c.User, h.now())
		}
		return err
	})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(ResolutionJSON(res, h.location(), c.Livemode())))
	return nil
}

// exceptionTotals: GET /api/v1/exceptions/totals, the listing's filter
// (its limit and after aside): how many exceptions and the sum of their
// transfers' amounts, per kind and over all.
func (h *Handler) exceptionTotals(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	f, err := recon.ParseExceptionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	tot, err := h.Store.ExceptionTotals(r.Context(), c.Tenant, f)
	if err != nil {
		return err
	}
	type kindJSON struct {
		Kind   string `json:"kind"`
		Count  int64  `json:"count"`
		Amount string `json:"amount"`
	}
	kinds := make([]kindJSON, len(tot.Kinds))
	for i, k := range tot.Kinds {
		kinds[i] = kindJSON{k.Kind, k.Count, recon.MoneyText(k.Amount)}
	}
	web.WriteJSON(w, http.StatusOK, ok(struct {
		Count    int64      `json:"count"`
		Amount   string     `json:"amount"`
		Kinds    []kindJSON `json:"kinds"`
		Livemode bool       `json:"livemode"`
	}{tot.All.Count, recon.MoneyText(tot.All.Amount), kinds, c.Livemode()}))
	return nil
}

// resolveExceptions: POST /api/v1/exceptions/resolve with
// {"transaction_ids":[N,...],"action":"ignore"|"refund"|"write_off","note":TEXT}:
// one decision given to each exception, each its own record
// (recon.ResolveEach); one refused does not stop the others. The answer
// lists each: resolved with its resolution, or refused with the error.
func (h *Handler) resolveExceptions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	var body struct {
		TransactionIDs []int64 `json:"transaction_ids"`
		Action         *string `json:"action"`
		Note           *string `json:"note"`
	}
	if err := web.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Action == nil {
		return recon.FieldError("action", "action is required: %s", strings.Join(recon.BulkResolveActions, ", "))
	}
	in := recon.ResolveInput{Action: *body.Action}
	if body.Note != nil {
		in.Note = *body.Note
	}
	out, err := recon.ResolveEach(r.Context(), h.Store, c.Tenant, body.TransactionIDs, in, c.User, h.now(),
		func(_ context.Context, id int64, change func(ctx context.Context) error) error {
			return h.audited(r, c, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, nil), change)
		})
	if err != nil && len(out) == 0 {
		return err
	}
	type itemJSON struct {
		TransactionID int64           `json:"transaction_id"`
		Status        string          `json:"status"` // resolved or refused
		Resolution    *resolutionJSON `json:"resolution,omitempty"`
		Error         string          `json:"error,omitempty"`
		Message       string          `json:"message,omitempty"`
	}
	items := make([]itemJSON, len(out))
	for i, res := range out {
		items[i] = itemJSON{TransactionID: res.TransactionID, Status: "resolved", Resolution: ResolutionJSON(res.Resolution, h.location(), c.Livemode())}
		if res.Err != nil {
			_, name := web.ErrorStatus(res.Err)
			items[i] = itemJSON{TransactionID: res.TransactionID, Status: "refused", Error: name, Message: recon.ErrorMessage(res.Err)}
		}
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(items))
	return nil
}
