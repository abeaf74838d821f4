package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
)

// orderPerPage is the orders screen's page size.
const orderPerPage = 20

// orderFilter reads the orders screen's query: the gateway's list filters
// (q, order_status, customer_id, from_created_at, end_created_at, sort)
// with the same bounds, and payment, API v2's status (the home's underpaid
// tile opens payment=partially_paid). q finds the payment code too
// (migration 00037).
func (h *Handler) orderFilter(r *http.Request) (recon.OrderFilter, url.Values, error) {
	q := url.Values{}
	for _, k := range []string{"q", "order_status", "payment", "customer_id", "from_created_at", "end_created_at", "sort", "page"} {
		if v := strings.TrimSpace(r.URL.Query().Get(k)); v != "" {
			q.Set(k, v)
		}
	}
	f := recon.OrderFilter{Query: q.Get("q"), Status: q.Get("order_status"), CustomerID: q.Get("customer_id"),
		From: q.Get("from_created_at"), To: q.Get("end_created_at"), Ascending: q.Get("sort") == "created_at:asc",
		Page: 1, PerPage: orderPerPage, Location: h.Location, V2Status: q.Get("payment")}
	if len(f.Query) > 255 || len(f.CustomerID) > 255 {
		return f, q, recon.FieldError("q", "search terms must be at most 255 characters")
	}
	if f.V2Status != "" && !slices.Contains(recon.OrderV2Statuses, f.V2Status) {
		return f, q, recon.FieldError("payment", "payment must be one of %s", strings.Join(recon.OrderV2Statuses, ", "))
	}
	if f.Status != "" && !slices.Contains(recon.OrderStatuses, f.Status) {
		return f, q, recon.FieldError("order_status", "order_status must be one of %s", strings.Join(recon.OrderStatuses, ", "))
	}
	for _, d := range []string{f.From, f.To} {
		if _, err := time.Parse(recon.DateLayout, d); d != "" && err != nil {
			return f, q, recon.FieldError("from_created_at", "dates must be in the form YYYY-MM-DD")
		}
	}
	if p := q.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > recon.MaxTransactionPage {
			return f, q, recon.FieldError("page", "page must be an integer from 1 to %d", recon.MaxTransactionPage)
		}
		f.Page = n
	}
	return f, q, nil
}

type ordersView struct {
	Query    url.Values
	Statuses []string
	Payments []string // API v2's statuses
	Error    string
	Rows     []*recon.Order
	Pager    pager
	// Code is the payment code the search names (links.go): Found says the
	// orders are those of the code found in a pasted memo, Transfers is the
	// transactions search of the code.
	Code, Transfers string
	Found           bool
	// Customer is the customer whose page the list links to: the
	// customer_id filter's, or the one the search names.
	Customer string
}

// orders serves GET /dashboard/orders.
func (h *Handler) orders(w http.ResponseWriter, r *http.Request, q *request) error {
	f, query, err := h.orderFilter(r)
	ctx := recon.Listing(r.Context()) // docs/design.md, "Reads from a standby"
	v := &ordersView{Query: query, Statuses: recon.OrderStatuses, Payments: recon.OrderV2Statuses}
	status := http.StatusOK
	if err != nil {
		v.Error, status = q.lang.ErrorString(err), http.StatusBadRequest
	} else {
		var total int64
		if v.Rows, total, err = h.Store.Orders(ctx, q.caller.Tenant, f); err != nil {
			return err
		}
		if v.Code = searchCode(q, f.Query); v.Code != "" {
			v.Transfers = "/dashboard/transactions?" + url.Values{"code": {v.Code}}.Encode()
		}
		if total == 0 && v.Code != "" && !strings.EqualFold(v.Code, f.Query) {
			// A memo pasted whole: the orders of the code it carries.
			f.Query, v.Found = v.Code, true
			if v.Rows, total, err = h.Store.Orders(ctx, q.caller.Tenant, f); err != nil {
				return err
			}
		}
		v.Pager = newPager(r.URL.Path, query, "page", f.Page, f.PerPage, total)
		v.Customer = listCustomer(f, v.Rows)
	}
	h.render(w, r, status, "orders", h.data(r, q, "orders", v))
	return nil
}

// event is one step of an order's timeline.
type event struct {
	At       string
	Key      string // message key, or "" for a match decision
	Decision *recon.MatchDecision
}

type orderView struct {
	O             *recon.Order
	Timeline      []event
	Notifications []*recon.Delivery
	NotifTimes    []string
	CanVoid       bool
	CanCancel     bool
	Error         string
	V2            *orderV2View // API v2's fields, virtual accounts and refunds (refunds.go)
	// Invoices are the order's e-invoices (invoices.go), shown when
	// HasInvoices; CanIssue shows the issue button (a paid order).
	Invoices              []invoiceRow
	HasInvoices, CanIssue bool
	// Transfers are the transfers the decisions name, with their states and
	// exceptions; NotifTargets each notification kind's target (links.go).
	Transfers    *orderTransfers
	NotifTargets map[string]string
}

// maxOrderNotifications bounds the notifications an order's page shows.
const maxOrderNotifications = 20

// order serves GET /dashboard/order?invoice=...: the order, its timeline
// and its notifications. Another tenant's invoice is 404.
func (h *Handler) order(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.renderOrder(w, r, q, r.URL.Query().Get("invoice"), http.StatusOK, "")
}

func (h *Handler) renderOrder(w http.ResponseWriter, r *http.Request, q *request, invoice string, status int, msg string) error {
	ctx := r.Context()
	o, err := h.Store.Order(ctx, q.caller.Tenant, invoice)
	if err != nil {
		return err
	}
	ds, err := h.Store.MatchDecisions(ctx, q.caller.Tenant, o.ID, 0)
	if err != nil {
		return err
	}
	notes, err := h.Store.OrderDeliveries(ctx, q.caller.Tenant, o, maxOrderNotifications)
	if err != nil {
		return err
	}
	v := &orderView{O: o, Notifications: notes, Error: msg}
	if v.Transfers, err = h.orderTransfers(ctx, q.caller.Tenant, ds); err != nil {
		return err
	}
	if _, v.NotifTargets, err = h.deliveryLinks(ctx, q.caller.Tenant, notes); err != nil {
		return err
	}
	for _, d := range notes {
		v.NotifTimes = append(v.NotifTimes, h.timeText(d.CreatedAt))
	}
	v.Timeline = append(v.Timeline, event{At: h.timeText(o.CreatedAt), Key: "ev_created"})
	for _, d := range ds {
		v.Timeline = append(v.Timeline, event{At: h.timeText(d.CreatedAt), Decision: d})
	}
	for _, e := range []struct {
		at  time.Time
		key string
	}{{o.PaidAt, "ev_captured"}, {o.CancelledAt, "ev_cancelled"}, {o.VoidedAt, "ev_voided"}} {
		if !e.at.IsZero() {
			v.Timeline = append(v.Timeline, event{At: h.timeText(e.at), Key: e.key})
		}
	}
	slices.SortStableFunc(v.Timeline, func(a, b event) int { return strings.Compare(a.At, b.At) })
	manage := q.caller.May(recon.ActionManageNotifications) && h.Orders != nil
	v.CanVoid = manage && recon.OrderAllows(o, recon.OrderVoid)
	v.CanCancel = manage && recon.OrderAllows(o, recon.OrderCancel)
	if v.V2, err = h.orderV2(r, q, o); err != nil {
		return err
	}
	if v.Invoices, v.HasInvoices, v.CanIssue, err = h.orderInvoices(r, q, o); err != nil {
		return err
	}
	h.render(w, r, status, "order", h.data(r, q, "order", v))
	return nil
}

// voidOrder serves POST /dashboard/order/void: the gateway's void
// (checkout.Service.Void: the same store call and IPN), for users who may
// manage notifications and merchant credentials (the gateway's own callers
// hold those). Without the confirmation field it shows the confirmation page
// instead.
func (h *Handler) voidOrder(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Orders == nil {
		return errNotFound()
	}
	invoice := r.PostForm.Get("invoice")
	if !confirmed(r) {
		return h.confirmOrderAction(w, r, q, "void", invoice)
	}
	_, err := h.Orders.Void(r.Context(), q.caller.Tenant, invoice)
	return h.afterOrderAction(w, r, q, invoice, err)
}

// cancelOrder serves POST /dashboard/order/cancel: the gateway's cancel
// (checkout.Service.Cancel), once confirmed.
func (h *Handler) cancelOrder(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Orders == nil {
		return errNotFound()
	}
	invoice := r.PostForm.Get("invoice")
	if !confirmed(r) {
		return h.confirmOrderAction(w, r, q, "cancel", invoice)
	}
	_, err := h.Orders.Cancel(r.Context(), q.caller.Tenant, invoice)
	return h.afterOrderAction(w, r, q, invoice, err)
}

// afterOrderAction shows the order again: after a change by a redirect (a
// reload does not repeat it), after a refused change with the reason.
func (h *Handler) afterOrderAction(w http.ResponseWriter, r *http.Request, q *request, invoice string, err error) error {
	if recon.ErrorCode(err) == recon.ECONFLICT {
		return h.renderOrder(w, r, q, invoice, http.StatusConflict, recon.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/order?"+url.Values{"invoice": {invoice}}.Encode(), http.StatusSeeOther)
	return nil
}
