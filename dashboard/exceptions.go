package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"recon"
)

// The exceptions queue (issue 11, item 3): the incoming transfers matching
// could not settle, read and resolved with the API's parser and store calls
// (recon.ParseExceptionFilter, recon.ExceptionStore, recon.Suggest).

type exceptionsView struct {
	Accounts []*recon.BankAccount
	Kinds    []string
	Query    url.Values
	Error    string
	Rows     []*recon.Exception
	Resolved bool
	Next     string // the next page's link (keyset: after the last id)
	First    string // the first page's link, on a later page
	RowTimes []string
	// Suggestions are each open row's suggested orders (recon.Suggest for
	// the whole page: one statement per reason).
	Suggestions [][]*recon.Suggestion
}

// exceptions serves GET /dashboard/exceptions: open (or, with
// status=resolved, resolved) exceptions, newest first, a page at a time.
func (h *Handler) exceptions(w http.ResponseWriter, r *http.Request, q *request) error {
	ctx := r.Context()
	accounts, err := h.Store.BankAccounts(ctx, q.caller.Tenant)
	if err != nil {
		return err
	}
	query := formQuery(r)
	f, err := recon.ParseExceptionFilter(query)
	v := &exceptionsView{Accounts: accounts, Kinds: recon.ExceptionKinds, Query: query, Resolved: f.Resolved}
	status := http.StatusOK
	if recon.ErrorCode(err) == recon.EINVALID {
		v.Error, status = recon.ErrorMessage(err), http.StatusBadRequest
	} else if err != nil {
		return err
	} else {
		var more bool
		if v.Rows, more, err = h.Store.Exceptions(ctx, q.caller.Tenant, f); err != nil {
			return err
		}
		for _, e := range v.Rows {
			v.RowTimes = append(v.RowTimes, e.Transaction.TransactionDate.Format("2006-01-02 15:04"))
		}
		if v.Suggestions, err = recon.Suggest(ctx, h.Store, q.caller.Tenant, v.Rows); err != nil {
			return err
		}
		if more {
			v.Next = keysetLink(r.URL.Path, query, "after", v.Rows[len(v.Rows)-1].Transaction.ID)
		}
		if f.After > 0 {
			v.First = keysetLink(r.URL.Path, query, "after", 0)
		}
	}
	h.render(w, r, status, "exceptions", h.data(r, q, "exceptions", v))
	return nil
}

// keysetLink is the link to a page of a keyset-paged list: the filter's
// query with param (the last id of the previous page) set to id, or left
// out for the first page (id 0).
func keysetLink(path string, query url.Values, param string, id int64) string {
	q := url.Values{}
	for k, vs := range query {
		if k != param {
			q[k] = vs
		}
	}
	if id > 0 {
		q.Set(param, strconv.FormatInt(id, 10))
	}
	return path + "?" + q.Encode()
}

type exceptionView struct {
	E           *recon.Exception
	Suggestions []*recon.Suggestion
	Decisions   []*recon.MatchDecision
	ResolvedAt  string
	CanResolve  bool
	// The form, after a refused resolution: the reason, and what was typed.
	Error, Choice, Invoice, Note string
	// Refund is the refund's part of the form (amount, receiver), as typed.
	Refund refundForm
	// HasRefunds: a refund resolution with a receiver creates a refund.
	HasRefunds bool
	MaxNote    int
	// Result is the order a match applied the transfer to, with its
	// notifications (after the redirect of a match).
	Result      *recon.Order
	ResultNotes []*recon.Delivery
}

// pathID reads {id}: a positive id, else 404.
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound()
	}
	return id, nil
}

// exception serves GET /dashboard/exceptions/{id}: the transfer, its
// decisions with their sentences, the suggested orders and why, the
// resolution (who, when, why) or the form to resolve it. Another tenant's
// (or mode's) transaction is 404.
func (h *Handler) exception(w http.ResponseWriter, r *http.Request, q *request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	return h.renderException(w, r, q, id, http.StatusOK, &exceptionView{})
}

func (h *Handler) renderException(w http.ResponseWriter, r *http.Request, q *request, id int64, status int, v *exceptionView) error {
	ctx := r.Context()
	e, err := h.Store.Exception(ctx, q.caller.Tenant, id)
	if err != nil {
		return err
	}
	s, err := recon.Suggest(ctx, h.Store, q.caller.Tenant, []*recon.Exception{e})
	if err != nil {
		return err
	}
	if v.Decisions, err = h.Store.MatchDecisions(ctx, q.caller.Tenant, 0, id); err != nil {
		return err
	}
	v.E, v.Suggestions, v.MaxNote = e, s[0], recon.MaxResolutionNote
	v.CanResolve = e.Resolution == nil && q.caller.May(recon.ActionResolveExceptions)
	v.HasRefunds = h.Refunds != nil
	if res := e.Resolution; res != nil {
		v.ResolvedAt = h.timeText(res.CreatedAt)
		// After a match, the order it paid (named in the redirect, checked
		// against the resolution) and its notifications.
		if inv := r.URL.Query().Get("order"); res.OrderID != 0 && inv != "" {
			o, err := h.Store.Order(ctx, q.caller.Tenant, inv)
			if err == nil && o.ID == res.OrderID {
				v.Result = o
				if v.ResultNotes, err = h.Store.OrderDeliveries(ctx, q.caller.Tenant, o, maxOrderNotifications); err != nil {
					return err
				}
			} else if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
				return err
			}
		}
	}
	h.render(w, r, status, "exception", h.data(r, q, "exception", v))
	return nil
}

// confirmResolveException serves GET /dashboard/exceptions/{id}/resolve:
// the resolution form's fields checked, then its confirmation page.
func (h *Handler) confirmResolveException(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.resolveStep(w, r, q, r.URL.Query(), false)
}

// resolveException serves POST /dashboard/exceptions/{id}/resolve: the
// field resolve is "match:INVOICE" (a suggested order), "match" (the order
// typed in invoice), "refund" or "ignore"; note says why. Once confirmed it
// calls the store's ResolveException as the API does: a match captures the
// order and sends its IPN. Without the confirmation field it shows the
// confirmation page.
func (h *Handler) resolveException(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.resolveStep(w, r, q, r.PostForm, confirmed(r))
}

// resolveStep checks a resolution (the fields, then recon.CheckResolution
// on the exception and order as they are now) and either resolves it
// (confirmed) or shows what it will do. A refused resolution shows the
// exception's page again with the reason and what was typed.
func (h *Handler) resolveStep(w http.ResponseWriter, r *http.Request, q *request, f url.Values, confirmed bool) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	e, err := h.Store.Exception(ctx, q.caller.Tenant, id)
	if err != nil {
		return err
	}
	v := &exceptionView{Choice: f.Get("resolve"), Invoice: strings.TrimSpace(f.Get("invoice")), Note: f.Get("note"), Refund: readRefundForm(f)}
	in := recon.ResolveInput{Action: v.Choice, Note: v.Note}
	if v.Choice == recon.ResolveRefund {
		// A refund of the transfer when a receiver is given (refunds.go).
		in.Receiver = recon.RefundReceiver{BankBIN: v.Refund.BankBIN, AccountNumber: v.Refund.AccountNumber, AccountName: v.Refund.AccountName}
		in.Amount, err = parseAmount("amount", v.Refund.Amount)
	}
	invoice, picked := strings.CutPrefix(v.Choice, recon.ResolveMatch+":")
	if !picked {
		invoice = v.Invoice
	}
	var o *recon.Order
	if picked || v.Choice == recon.ResolveMatch {
		in.Action = recon.ResolveMatch
		if invoice == "" {
			err = recon.FieldError("invoice", "type the invoice number of the order to match, or choose a suggested order")
		} else if o, err = h.Store.Order(ctx, q.caller.Tenant, invoice); recon.ErrorCode(err) == recon.ENOTFOUND {
			err = recon.FieldError("invoice", "there is no order with invoice number %q", invoice)
		} else if err == nil {
			in.OrderID = o.ID
		}
	}
	if err == nil {
		err = in.Validate()
	}
	if err == nil && in.Action == recon.ResolveRefund && in.Receiver.Known() && h.Refunds != nil {
		var refundable int64
		if refundable, err = h.Refunds.Refundable(ctx, q.caller, 0, id); err == nil {
			err = precheckRefund(&recon.RefundRequest{Amount: in.Amount, Receiver: in.Receiver}, refundable)
		}
	}
	if err == nil {
		err = recon.CheckResolution(e, &in, o)
	}
	if err == nil && !confirmed {
		return h.confirmResolve(w, r, q, e, v, in, o)
	}
	if err == nil {
		err = h.audit(r, q, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, o), func(ctx context.Context) error {
			_, err := h.Store.ResolveException(ctx, q.caller.Tenant, id, in, q.caller.User, h.now())
			return err
		})
	}
	switch recon.ErrorCode(err) {
	case "":
	case recon.EINVALID, recon.ECONFLICT, recon.EUNPROCESSABLE:
		status := refusedStatus(err)
		v.Error = recon.ErrorMessage(err)
		if in.Action == recon.ResolveRefund {
			v.Error = refundText(q.lang, err)
		}
		return h.renderException(w, r, q, id, status, v)
	default:
		return err
	}
	target := "/dashboard/exceptions/" + strconv.FormatInt(id, 10)
	if o != nil {
		target += "?" + url.Values{"order": {o.InvoiceNumber}}.Encode()
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}
