package dashboard

import (
	"context"
	"fmt"
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
	// Totals are the filter's count and sum per kind and over all
	// (ExceptionStore.ExceptionTotals); nil after a refused filter.
	Totals *recon.ExceptionTotals
	// CanBulk shows the rows' check boxes and the bulk form: an open list
	// and a caller who may resolve.
	CanBulk     bool
	BulkActions []string
	// After a bulk step: what was refused before anything was done
	// (BulkError, the ticked rows in Checked), or each exception's outcome.
	BulkError string
	Checked   map[int64]bool
	Bulk      []bulkRow
}

// bulkRow is one exception's outcome of a bulk resolution.
type bulkRow struct {
	ID    int64
	Done  bool
	Error string
}

// exceptions serves GET /dashboard/exceptions: open (or, with
// status=resolved, resolved) exceptions, newest first, a page at a time.
func (h *Handler) exceptions(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.exceptionsPage(w, r, q, formQuery(r), nil)
}

// exceptionsPage renders the list of the filter query; extra, when set,
// adds a bulk step's outcome to the view.
func (h *Handler) exceptionsPage(w http.ResponseWriter, r *http.Request, q *request, query url.Values, extra func(*exceptionsView)) error {
	ctx := r.Context()
	accounts, err := h.Store.BankAccounts(ctx, q.caller.Tenant)
	if err != nil {
		return err
	}
	f, err := recon.ParseExceptionFilter(query)
	v := &exceptionsView{Accounts: accounts, Kinds: recon.ExceptionKinds, Query: query, Resolved: f.Resolved}
	status := http.StatusOK
	if recon.ErrorCode(err) == recon.EINVALID {
		v.Error, status = excText(q.lang, err), http.StatusBadRequest
	} else if err != nil {
		return err
	} else {
		var more bool
		if v.Rows, more, err = h.Store.Exceptions(ctx, q.caller.Tenant, f); err != nil {
			return err
		}
		if v.Totals, err = h.Store.ExceptionTotals(ctx, q.caller.Tenant, f); err != nil {
			return err
		}
		for _, e := range v.Rows {
			v.RowTimes = append(v.RowTimes, e.Transaction.TransactionDate.Format("2006-01-02 15:04")) // a wall-clock time of the business zone
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
	v.CanBulk = !f.Resolved && q.caller.May(recon.ActionResolveExceptions) && len(v.Rows) > 0
	v.BulkActions = recon.BulkResolveActions
	if extra != nil {
		extra(v)
		if v.BulkError != "" {
			status = http.StatusBadRequest
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
	// Named are the invoice numbers of the orders the exception names
	// (links.go).
	Named []string
	// History is every decision about the exception, oldest first
	// (recon.ExceptionHistory), times in the business time zone.
	History []historyRow
	// Remainder is what the named order still lacks when the remainder
	// may be written off or asked for (recon.CheckRemainder), else 0;
	// CanAsk: asking needs API v2's orders service (virtual accounts).
	Remainder int64
	CanAsk    bool
}

// historyRow is a line of the decision history.
type historyRow struct {
	When string
	recon.HistoryEntry
	// QR is the VietQR image of the account an ask for the remainder made,
	// while the order is open ("" otherwise).
	QR string
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
	if v.Named, err = h.namedOrders(ctx, q.caller.Tenant, e); err != nil {
		return err
	}
	v.CanResolve = e.Resolution == nil && q.caller.May(recon.ActionResolveExceptions)
	v.HasRefunds = h.Refunds != nil
	if e.Resolution == nil && recon.CheckRemainder(e, e.Order) == nil {
		v.Remainder, v.CanAsk = recon.Remainder(e.Order), h.V2Orders != nil
	}
	for _, x := range recon.ExceptionHistory(e, v.Decisions) {
		row := historyRow{When: h.timeText(x.At), HistoryEntry: x}
		if res := x.Resolution; res != nil && res.VANumber != "" && e.Order != nil && e.Order.Status == recon.OrderAwaitingPayment {
			row.QR = "/dashboard/order/va-qr.png?" + url.Values{"invoice": {e.Order.InvoiceNumber}, "va": {res.VANumber}}.Encode()
		}
		v.History = append(v.History, row)
	}
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
	if in.Action == recon.ResolveAskRemainder {
		in.VA = &recon.VirtualAccount{} // checked with a placeholder: recon.AskRemainder makes the account
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
		named := o
		if recon.ForUnderpaid(in.Action) {
			named = e.Order
		}
		err = recon.CheckResolution(e, &in, named)
	}
	if err == nil && in.Action == recon.ResolveAskRemainder && h.V2Orders == nil {
		err = recon.Errorf(recon.EUNPROCESSABLE, "virtual accounts are not available on this server: the remainder cannot be asked for")
	}
	if err == nil && !confirmed {
		return h.confirmResolve(w, r, q, e, v, in, o)
	}
	if err == nil {
		err = h.audit(r, q, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, o), func(ctx context.Context) (err error) {
			if in.Action == recon.ResolveAskRemainder {
				in.VA = nil
				_, err = recon.AskRemainder(ctx, h.Store, h.V2Orders, q.caller.Tenant, id, in, q.caller.User, h.now())
			} else {
				_, err = h.Store.ResolveException(ctx, q.caller.Tenant, id, in, q.caller.User, h.now())
			}
			return err
		})
	}
	switch recon.ErrorCode(err) {
	case "":
	case recon.EINVALID, recon.ECONFLICT, recon.EUNPROCESSABLE, recon.ENOTFOUND:
		status := refusedStatus(err)
		v.Error = excText(q.lang, err)
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

// resolveConfirmExtras adds to a resolution's confirmation page
// (confirmResolve) what the decision does beyond the transfer: a match
// that pays the order more than it still lacks warns with the amounts
// (recon.Overpayment); a write-off shows the order, what is written off,
// that it becomes paid and the ORDER_PAID that goes out; an ask for the
// remainder shows the order and the account it adds for what is left.
func (h *Handler) resolveConfirmExtras(r *http.Request, q *request, e *recon.Exception, in recon.ResolveInput, o *recon.Order, c *confirmView) error {
	l := q.lang
	switch {
	case in.Action == recon.ResolveMatch && o != nil:
		if over := recon.Overpayment(e.Transaction.AmountIn, o); over > 0 {
			c.Warning = fmt.Sprintf(l.T("x_overpay_warning"), l.Money(e.Transaction.AmountIn), o.InvoiceNumber, l.Money(recon.Remainder(o)), l.Money(over))
		}
	case recon.ForUnderpaid(in.Action) && e.Order != nil:
		o := e.Order
		c.Items = append(c.Items, orderItems(l, o)...)
		if in.Action == recon.ResolveWriteOff {
			notify, err := h.notificationLine(r, q, recon.DeliveryIPN, recon.IPNOrderPaid)
			if err != nil {
				return err
			}
			c.Intro = "x_write_off_intro"
			c.Items = append(c.Items, confirmItem{"x_written_off", l.Money(recon.Remainder(o)), "c-written-off"},
				confirmItem{"c_status_after", l.T("st_" + recon.OrderCaptured), "c-after"}, confirmItem{"c_notification", notify, "c-notification"})
		} else {
			c.Intro = "x_ask_intro"
			c.Items = append(c.Items, confirmItem{"x_asked", l.Money(recon.Remainder(o)), "c-asked"},
				confirmItem{"x_ask_how", l.T("x_ask_how_text"), "c-ask-how"})
		}
	}
	return nil
}

// bulkForm reads a bulk resolution's fields: the ticked exceptions (id,
// repeated), the action (bulk_action) and the note.
func bulkForm(f url.Values) ([]int64, recon.ResolveInput, error) {
	in := recon.ResolveInput{Action: f.Get("bulk_action"), Note: f.Get("note")}
	var ids []int64
	for _, s := range f["id"] {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || id <= 0 {
			return ids, in, recon.FieldError("transaction_ids", "%q is not an exception's transaction id", s)
		}
		ids = append(ids, id)
	}
	return ids, in, nil
}

// confirmBulk serves GET /dashboard/exceptions/bulk: the ticked exceptions
// and one decision checked (recon.ResolveEach's rules, before anything is
// done), then one confirmation page listing each exception. A refused
// step shows the open list again with the reason, the rows still ticked.
func (h *Handler) confirmBulk(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.bulkStep(w, r, q, r.URL.Query(), false)
}

// resolveBulk serves POST /dashboard/exceptions/bulk: confirmed, it gives
// each exception its own decision (recon.ResolveEach) and shows the open
// list with each one's outcome; without the confirmation, the page of
// confirmBulk.
func (h *Handler) resolveBulk(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.bulkStep(w, r, q, r.PostForm, confirmed(r))
}

func (h *Handler) bulkStep(w http.ResponseWriter, r *http.Request, q *request, f url.Values, confirmed bool) error {
	ctx := r.Context()
	ids, in, err := bulkForm(f)
	var list []*recon.Exception
	if err == nil {
		err = recon.CheckBulk(ids, &in)
	}
	for _, id := range ids {
		if err != nil {
			break
		}
		var e *recon.Exception
		if e, err = h.Store.Exception(ctx, q.caller.Tenant, id); err == nil {
			list = append(list, e)
		}
	}
	if err != nil {
		if c := recon.ErrorCode(err); c != recon.EINVALID && c != recon.ENOTFOUND {
			return err
		}
		checked := map[int64]bool{}
		for _, id := range ids {
			checked[id] = true
		}
		msg := excText(q.lang, err)
		return h.exceptionsPage(w, r, q, url.Values{}, func(v *exceptionsView) { v.BulkError, v.Checked = msg, checked })
	}
	if !confirmed {
		l := q.lang
		c := &confirmView{Title: "x_bulk_title", Intro: "x_bulk_intro", Action: "/dashboard/exceptions/bulk", Button: "x_bulk_apply",
			Back: "/dashboard/exceptions", Fields: [][2]string{{"bulk_action", in.Action}, {"note", in.Note}},
			Items: []confirmItem{{"x_action", l.T("xb_" + in.Action), "c-action"}, {"x_note", in.Note, "c-note"},
				{"x_bulk_count", l.Count(int64(len(list))), "c-count"}}}
		for _, e := range list {
			t := e.Transaction
			id := strconv.FormatInt(t.ID, 10)
			c.Fields = append(c.Fields, [2]string{"id", id})
			c.Items = append(c.Items, confirmItem{"transaction", id + " · " + t.TransactionDate.Format("2006-01-02 15:04") + " · " +
				l.T("xk_"+e.Kind) + " · " + l.Money(t.AmountIn+t.AmountOut) + " · " + t.Content, "c-x-" + id})
		}
		return h.renderConfirm(w, r, q, c)
	}
	out, err := recon.ResolveEach(ctx, h.Store, q.caller.Tenant, ids, in, q.caller.User, h.now(),
		func(_ context.Context, id int64, change func(ctx context.Context) error) error {
			return h.audit(r, q, recon.AuditExceptionDecision, "exception "+strconv.FormatInt(id, 10), recon.AuditResolution(in, nil), change)
		})
	if err != nil && recon.ErrorCode(err) != recon.EINVALID {
		return err
	}
	rows := make([]bulkRow, len(out))
	for i, res := range out {
		rows[i] = bulkRow{ID: res.TransactionID, Done: res.Err == nil}
		if res.Err != nil {
			rows[i].Error = excText(q.lang, res.Err)
		}
	}
	return h.exceptionsPage(w, r, q, url.Values{}, func(v *exceptionsView) {
		v.Bulk = rows
		if err != nil {
			v.BulkError = excText(q.lang, err)
		}
	})
}
