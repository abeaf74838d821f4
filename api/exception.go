package api

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
	Livemode      bool          `json:"livemode"`
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
		PreviousState: previousJSON{Status: "open", Kind: r.PreviousKind, Reason: r.PreviousReason}, Livemode: livemode}
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

var exceptionParams = []string{"kind", "bank_account_id", "from_date", "to_date", "status", "limit", "after"}

// parseExceptionFilter reads the listing's query parameters strictly, as
// §4.3's are read: an unknown or repeated parameter, or a value of the wrong
// form, is EINVALID naming it.
func parseExceptionFilter(q url.Values) (recon.ExceptionFilter, error) {
	f := recon.ExceptionFilter{Limit: recon.DefaultTransactionLimit}
	if err := recon.CheckParams(q, exceptionParams); err != nil {
		return f, err
	}
	for _, p := range []struct {
		name string
		max  int64
		dst  func(int64)
	}{
		{"limit", recon.MaxTransactionLimit, func(n int64) { f.Limit = int(n) }},
		{"bank_account_id", math.MaxInt64, func(n int64) { f.BankAccountID = n }},
		{"after", math.MaxInt64, func(n int64) { f.After = n }},
	} {
		if !q.Has(p.name) {
			continue
		}
		n, err := strconv.ParseInt(q.Get(p.name), 10, 64)
		if err != nil || n < 1 || n > p.max {
			return f, recon.FieldError(p.name, "%s must be an integer from 1 to %d", p.name, p.max)
		}
		p.dst(n)
	}
	if q.Has("kind") {
		f.Kind = q.Get("kind")
		if !slices.Contains(recon.ExceptionKinds, f.Kind) {
			return f, recon.FieldError("kind", "kind must be one of %s", strings.Join(recon.ExceptionKinds, ", "))
		}
	}
	if v := q.Get("status"); q.Has("status") && v != "open" {
		if v != "resolved" {
			return f, recon.FieldError("status", "status must be open or resolved")
		}
		f.Resolved = true
	}
	return f, recon.ParseDateRange(q, &f.FromDate, &f.ToDate)
}

// Suggest returns the suggested orders of each exception (the tenant's
// payment-code formats read once), as the API and the CLI show them.
func Suggest(ctx context.Context, s recon.Store, companyID int64, list []*recon.Exception) ([][]*recon.Suggestion, error) {
	co, err := s.Company(ctx, companyID)
	if err != nil {
		return nil, err
	}
	out := make([][]*recon.Suggestion, len(list))
	for i, e := range list {
		if out[i], err = s.ExceptionSuggestions(ctx, companyID, e, co.Config.PaymentCodeFormats); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listExceptions: GET /api/v1/exceptions, newest first, keyset-paginated
// (after = the last transaction_id of the previous page), each exception
// with its suggested orders.
func (h *Handler) listExceptions(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	f, err := parseExceptionFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list, more, err := h.Store.Exceptions(r.Context(), c.CompanyID, f)
	if err != nil {
		return err
	}
	suggestions, err := Suggest(r.Context(), h.Store, c.CompanyID, list)
	if err != nil {
		return err
	}
	data := make([]exceptionJSON, len(list))
	for i, e := range list {
		data[i] = ExceptionJSON(e, suggestions[i], h.location(), c.Livemode)
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
	e, err := h.Store.Exception(r.Context(), c.CompanyID, id)
	if err != nil {
		return err
	}
	s, err := Suggest(r.Context(), h.Store, c.CompanyID, []*recon.Exception{e})
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(r.Context(), c.CompanyID, 0, id)
	if err != nil {
		return err
	}
	j := ExceptionJSON(e, s[0], h.location(), c.Livemode)
	j.MatchDecisions = decisionsJSON(ds, h.location())
	web.WriteJSON(w, http.StatusOK, ok(j))
	return nil
}

// resolveException: POST /api/v1/exceptions/{id}/resolve with
// {"action":"match"|"refund"|"ignore","order_id":N,"note":TEXT}; the caller's
// user is recorded as who decided.
func (h *Handler) resolveException(w http.ResponseWriter, r *http.Request, c *recon.Caller) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var body struct {
		Action  *string      `json:"action"`
		OrderID *json.Number `json:"order_id"`
		Note    *string      `json:"note"`
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
	if err := in.Validate(); err != nil {
		return err
	}
	res, err := h.Store.ResolveException(r.Context(), c.CompanyID, id, in, c.User, h.now())
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, ok(ResolutionJSON(res, h.location(), c.Livemode)))
	return nil
}
