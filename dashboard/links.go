package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"recon"
	"recon/web"
)

// The links between pages (docs/dashboard.md, "Links between pages"): a
// transaction names the order it paid and its exception, an order its
// transfers, exceptions and notifications, a notification its order and
// target, an exception its order, and a customer's page gathers the orders,
// transfers and exceptions of one customer_id (recon.PageLinkStore).

func init() {
	funcs["customerURL"] = customerURL
	funcs["orderURL"] = orderURL
	funcs["outcomeOf"] = outcomeOf
	funcs["slice2s"] = func(a, b string) []string { return []string{a, b} }
	funcs["txLinkOf"] = func(l lang, t *recon.Transaction, links map[int64]recon.TransactionLink) any {
		return struct {
			Lang lang
			T    *recon.Transaction
			L    recon.TransactionLink
		}{l, t, links[t.ID]}
	}
	funcs["txRowsOf"] = func(l lang, id string, rows []*recon.Transaction, links map[int64]recon.TransactionLink) any {
		return struct {
			Lang  lang
			ID    string
			Rows  []*recon.Transaction
			Links map[int64]recon.TransactionLink
		}{l, id, rows, links}
	}
}

func (h *Handler) registerLinks(mux *web.Mux) {
	mux.Handle("GET /dashboard/customers/{customer_id}", h.page(recon.ActionReadMoney, h.customer))
}

// customerURL is the customer's page.
func customerURL(customerID string) string {
	return "/dashboard/customers/" + url.PathEscape(customerID)
}

// orderURL is the order's page.
func orderURL(invoice string) string {
	return "/dashboard/order?" + url.Values{"invoice": {invoice}}.Encode()
}

// outcomeOf is t's decision outcome as the CSV and the badges name it: the
// newest decision's, "unmatched" for money in without one, "" for money out.
func outcomeOf(t *recon.Transaction, l recon.TransactionLink) string {
	if l.Outcome == "" && t.AmountIn > 0 {
		return recon.StateUnmatched
	}
	return l.Outcome
}

func transactionIDs(rows []*recon.Transaction) []int64 {
	ids := make([]int64, 0, len(rows))
	for _, t := range rows {
		ids = append(ids, t.ID)
	}
	return ids
}

// deliveryLinks names each delivery's order (by invoice) and each kind's
// target URL ("" when the tenant has none: a test tenant's wait for recon
// listen).
func (h *Handler) deliveryLinks(ctx context.Context, tenant recon.TenantID, rows []*recon.Delivery) (map[int64]string, map[string]string, error) {
	var ids []int64
	targets := map[string]string{}
	for _, d := range rows {
		if d.OrderID != 0 && !slices.Contains(ids, d.OrderID) {
			ids = append(ids, d.OrderID)
		}
		if _, seen := targets[d.Kind]; seen {
			continue
		}
		t, err := h.Store.DeliveryTarget(ctx, tenant.ID(), d.Kind)
		switch {
		case recon.ErrorCode(err) == recon.ENOTFOUND:
			targets[d.Kind] = ""
		case err != nil:
			return nil, nil, err
		default:
			targets[d.Kind] = t.URL
		}
	}
	invoices, err := h.Store.OrderInvoices(ctx, tenant, ids)
	return invoices, targets, err
}

// linkedException is an exception a page links to: its transfer and state.
type linkedException struct {
	T    *recon.Transaction
	Link recon.TransactionLink
}

// exceptionsOf keeps the rows with an exception, open ones first.
func exceptionsOf(rows []*recon.Transaction, links map[int64]recon.TransactionLink) []linkedException {
	var out []linkedException
	for _, t := range rows {
		if l := links[t.ID]; l.ExceptionKind != "" {
			out = append(out, linkedException{t, l})
		}
	}
	slices.SortStableFunc(out, func(a, b linkedException) int {
		switch {
		case a.Link.ExceptionResolved == b.Link.ExceptionResolved:
			return 0
		case b.Link.ExceptionResolved:
			return -1
		}
		return 1
	})
	return out
}

// orderTransfers are an order's transfers (its decisions' transactions)
// with their links, and their exceptions.
type orderTransfers struct {
	Rows       []*recon.Transaction
	Links      map[int64]recon.TransactionLink
	Exceptions []linkedException
}

// orderTransfers reads the transfers the decisions name.
func (h *Handler) orderTransfers(ctx context.Context, tenant recon.TenantID, ds []*recon.MatchDecision) (*orderTransfers, error) {
	var ids []int64
	for _, d := range ds {
		if !slices.Contains(ids, d.TransactionID) {
			ids = append(ids, d.TransactionID)
		}
	}
	v := &orderTransfers{}
	var err error
	if v.Rows, err = h.Store.TransactionsByID(ctx, tenant, ids); err != nil {
		return nil, err
	}
	if v.Links, err = h.Store.TransactionLinks(ctx, tenant, ids); err != nil {
		return nil, err
	}
	v.Exceptions = exceptionsOf(v.Rows, v.Links)
	return v, nil
}

// namedOrders are the orders an exception names that its page does not show
// already: its decision's when the store did not read it (e.Order, which the
// page shows) and, after a match, the one the resolution paid; invoice
// numbers in that order.
func (h *Handler) namedOrders(ctx context.Context, tenant recon.TenantID, e *recon.Exception) ([]string, error) {
	var ids []int64
	if e.OrderID != 0 && e.Order == nil {
		ids = append(ids, e.OrderID)
	}
	if e.Resolution != nil && e.Resolution.OrderID != 0 && e.Resolution.OrderID != e.OrderID {
		ids = append(ids, e.Resolution.OrderID)
	}
	invoices, err := h.Store.OrderInvoices(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if inv, ok := invoices[id]; ok {
			out = append(out, inv)
		}
	}
	return out, nil
}

// customerOrders is how many of a customer's orders their page shows (the
// orders list filtered by customer_id shows them all).
const customerOrders = 20

type customerView struct {
	ID          string
	Orders      []*recon.Order
	OrderTimes  []string
	OrdersTotal int64
	MoreOrders  bool
	AllOrders   string // the orders list of the customer
	Transfers   []*recon.Transaction
	Links       map[int64]recon.TransactionLink
	// MoreTransfers: the page shows the newest recon.MaxCustomerTransfers.
	MoreTransfers bool
	Exceptions    []linkedException
}

// customer serves GET /dashboard/customers/{customer_id}: the orders of one
// customer_id, the transfers matched to them and those transfers'
// exceptions, of the signed-in tenant (company and mode). A customer_id
// without an order in the tenant is 404.
func (h *Handler) customer(w http.ResponseWriter, r *http.Request, q *request) error {
	id := r.PathValue("customer_id")
	if id == "" || len(id) > 255 || strings.TrimSpace(id) != id {
		return errNotFound()
	}
	ctx := r.Context()
	v := &customerView{ID: id, AllOrders: "/dashboard/orders?" + url.Values{"customer_id": {id}}.Encode()}
	var err error
	v.Orders, v.OrdersTotal, err = h.Store.Orders(ctx, q.caller.Tenant, recon.OrderFilter{CustomerID: id, Page: 1, PerPage: customerOrders, Location: h.Location})
	if err != nil {
		return err
	}
	if v.OrdersTotal == 0 {
		return recon.Errorf(recon.ENOTFOUND, "no order has customer_id %q", id)
	}
	v.MoreOrders = v.OrdersTotal > int64(len(v.Orders))
	for _, o := range v.Orders {
		v.OrderTimes = append(v.OrderTimes, h.timeText(o.CreatedAt))
	}
	if v.Transfers, err = h.Store.CustomerTransactions(ctx, q.caller.Tenant, id, recon.MaxCustomerTransfers); err != nil {
		return err
	}
	v.MoreTransfers = len(v.Transfers) == recon.MaxCustomerTransfers
	if v.Links, err = h.Store.TransactionLinks(ctx, q.caller.Tenant, transactionIDs(v.Transfers)); err != nil {
		return err
	}
	v.Exceptions = exceptionsOf(v.Transfers, v.Links)
	h.render(w, r, http.StatusOK, "customer", h.data(r, q, "lk_customer", v))
	return nil
}

// tileLists are the transactions lists of a home tile's days: the money in,
// out, matched and unmatched, whose counts are the tile's (the search
// counts them from the same day sums, sqlstore.dayCount).
type tileLists struct{ In, Out, Matched, Unmatched string }

func newTileLists(from, to string) tileLists {
	link := func(k, v string) string {
		return "/dashboard/transactions?" + url.Values{"from_date": {from}, "to_date": {to}, k: {v}}.Encode()
	}
	return tileLists{In: link("direction", recon.DirectionIn), Out: link("direction", recon.DirectionOut),
		Matched: link("matched", recon.StateMatched), Unmatched: link("matched", recon.StateUnmatched)}
}

// searchCode is the payment code an orders search names: the one the
// company's formats find in it (a memo pasted whole), else the search
// itself when it could be a code (letters and digits, as the transactions
// search's code); "" when neither.
func searchCode(q *request, text string) string {
	if text == "" {
		return ""
	}
	if c := recon.CompanyExtractor(&q.company.Config).Extract(text); c != "" {
		return c
	}
	s, err := recon.ParseTransactionSearch(url.Values{"code": {text}})
	if err != nil {
		return ""
	}
	return s.Code
}

// listCustomer is the customer whose page an orders list links to: the
// customer_id filter's, or the customer a search names (a row's customer id
// equal to the search, ignoring case); "" when none or no row.
func listCustomer(f recon.OrderFilter, rows []*recon.Order) string {
	if len(rows) == 0 {
		return ""
	}
	if f.CustomerID != "" {
		return f.CustomerID
	}
	for _, o := range rows {
		if o.CustomerID != "" && strings.EqualFold(o.CustomerID, f.Query) {
			return o.CustomerID
		}
	}
	return ""
}
