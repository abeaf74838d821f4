package gateway

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/web"
)

// Order listing limits (docs/design.md, D6).
const (
	defaultPerPage = 20
	maxPerPage     = 100
	maxPage        = 1_000_000
	maxQueryLen    = 255
)

// orderParams are the query parameters of GET /v1/order. to_created_at and
// sort[created_at] are the spellings of the public PHP SDK for
// end_created_at and sort.
var orderParams = []string{"per_page", "page", "q", "order_status", "customer_id", "created_at",
	"from_created_at", "end_created_at", "to_created_at", "sort", "sort[created_at]"}

// parseOrderFilter reads §4.6's query parameters strictly: an unknown or
// repeated parameter, or a value of the wrong form, is EINVALID naming it.
func parseOrderFilter(q url.Values) (recon.OrderFilter, error) {
	f := recon.OrderFilter{Page: 1, PerPage: defaultPerPage}
	for name, vals := range q {
		if !slices.Contains(orderParams, name) {
			return f, recon.FieldError(name, "unknown query parameter %q (known: %s)", printable(name), strings.Join(orderParams, ", "))
		}
		if len(vals) > 1 {
			return f, recon.FieldError(name, "query parameter %s is given %d times", name, len(vals))
		}
	}
	for _, p := range []struct {
		name   string
		dst    *int
		hi     int
		expect string
	}{{"page", &f.Page, maxPage, ""}, {"per_page", &f.PerPage, maxPerPage, ""}} {
		if !q.Has(p.name) {
			continue
		}
		n, err := strconv.Atoi(q.Get(p.name))
		if err != nil || n < 1 || n > p.hi {
			return f, recon.FieldError(p.name, "%s must be an integer from 1 to %d", p.name, p.hi)
		}
		*p.dst = n
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"q", &f.Query}, {"customer_id", &f.CustomerID}} {
		v := q.Get(p.name)
		if len(v) > maxQueryLen {
			return f, recon.FieldError(p.name, "%s must be at most %d characters", p.name, maxQueryLen)
		}
		*p.dst = v // "" filters nothing
	}
	if q.Has("order_status") {
		f.Status = q.Get("order_status")
		if !slices.Contains(recon.OrderStatuses, f.Status) {
			return f, recon.FieldError("order_status", "order_status must be one of CAPTURED, CANCELLED, AUTHENTICATION_NOT_NEEDED")
		}
	}
	if q.Has("end_created_at") && q.Has("to_created_at") {
		return f, recon.FieldError("to_created_at", "give end_created_at or to_created_at, not both")
	}
	end := "end_created_at"
	if q.Has("to_created_at") {
		end = "to_created_at"
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"created_at", &f.CreatedOn}, {"from_created_at", &f.From}, {end, &f.To}} {
		if !q.Has(p.name) {
			continue
		}
		v := q.Get(p.name)
		if _, err := time.Parse(recon.DateLayout, v); err != nil || len(v) != 10 {
			return f, recon.FieldError(p.name, "%s must be a date in the form YYYY-MM-DD", p.name)
		}
		*p.dst = v
	}
	if f.From != "" && f.To != "" && f.From > f.To {
		return f, recon.FieldError("from_created_at", "from_created_at must not be after %s", end)
	}
	switch {
	case q.Has("sort") && q.Has("sort[created_at]"):
		return f, recon.FieldError("sort", "give sort or sort[created_at], not both")
	case q.Has("sort"):
		switch q.Get("sort") {
		case "created_at:asc":
			f.Ascending = true
		case "created_at:desc":
		default:
			return f, recon.FieldError("sort", "sort must be created_at:asc or created_at:desc")
		}
	case q.Has("sort[created_at]"):
		switch q.Get("sort[created_at]") {
		case "asc":
			f.Ascending = true
		case "desc":
		default:
			return f, recon.FieldError("sort[created_at]", "sort[created_at] must be asc or desc")
		}
	}
	return f, nil
}

// listMeta is the order list meta of §2.7.
type listMeta struct {
	PerPage     int   `json:"per_page"`
	Total       int64 `json:"total"`
	HasMore     bool  `json:"has_more"`
	CurrentPage int   `json:"current_page"`
	PageCount   int64 `json:"page_count"`
}

// listOrders serves GET /v1/order (spec §4.6; docs/api.md, Payment gateway): the
// merchant's orders, newest first.
func (h *Handler) listOrders(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	f, err := parseOrderFilter(r.URL.Query())
	if err != nil {
		return err
	}
	f.Location = h.location()
	list, total, err := h.Store.Orders(recon.Listing(r.Context()), m.Tenant, f)
	if err != nil {
		return err
	}
	data := make([]orderJSON, len(list))
	for i, o := range list {
		data[i] = h.toOrderJSON(o, m)
	}
	per := int64(f.PerPage)
	web.WriteJSON(w, http.StatusOK, struct {
		Data []orderJSON `json:"data"`
		Meta listMeta    `json:"meta"`
	}{data, listMeta{
		PerPage: f.PerPage, Total: total, HasMore: int64(f.Page)*per < total,
		CurrentPage: f.Page, PageCount: max(1, (total+per-1)/per),
	}})
	return nil
}

// orderDetailJSON is the body of GET /v1/order/detail/{invoice}: the order of
// §2.7, its transactions as the public SDKs read them, how it is paid, and
// every matching decision about it.
type orderDetailJSON struct {
	orderJSON
	Transactions   []transactionJSON `json:"transactions"`
	Payment        paymentJSON       `json:"payment"`
	MatchDecisions []decisionJSON    `json:"match_decisions"`
}

// transactionJSON is a bank transfer that counted towards the order.
type transactionJSON struct {
	ID                   string `json:"id"`
	PaymentMethod        string `json:"payment_method"`
	TransactionType      string `json:"transaction_type"`
	TransactionAmount    string `json:"transaction_amount"`
	TransactionCurrency  string `json:"transaction_currency"`
	TransactionStatus    string `json:"transaction_status"`
	AuthenticationStatus string `json:"authentication_status"`
	TransactionDate      string `json:"transaction_date"`
}

type paymentJSON struct {
	Method         string           `json:"method"`
	Code           string           `json:"code"`
	VirtualAccount *string          `json:"virtual_account"`
	BankAccount    *bankAccountJSON `json:"bank_account"`
	PaidAmount     string           `json:"paid_amount"`
	PaidAt         *string          `json:"paid_at"`
	CancelledAt    *string          `json:"cancelled_at"`
	VoidedAt       *string          `json:"voided_at"`
	CheckoutURL    string           `json:"checkout_url"`
}

type bankAccountJSON struct {
	ID            int64  `json:"id"`
	BankName      string `json:"bank_name"`
	AccountNumber string `json:"account_number"`
	HolderName    string `json:"holder_name"`
}

type decisionJSON struct {
	ID            string `json:"id"`
	TransactionID string `json:"transaction_id"`
	Outcome       string `json:"outcome"`
	Rule          string `json:"rule"`
	Code          string `json:"code"`
	Amount        string `json:"amount"`
	OrderAmount   string `json:"order_amount"`
	PaidTotal     string `json:"paid_total"`
	Reason        string `json:"reason"`
	At            string `json:"at"`
}

// orderDetail serves GET /v1/order/detail/{invoice}.
func (h *Handler) orderDetail(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	ctx := r.Context()
	o, err := h.Store.Order(ctx, m.Tenant, r.PathValue("invoice"))
	if err != nil {
		return err
	}
	decisions, err := h.Store.MatchDecisions(ctx, m.Tenant, o.ID, 0)
	if err != nil {
		return err
	}
	d := orderDetailJSON{
		orderJSON:      h.toOrderJSON(o, m),
		Transactions:   []transactionJSON{},
		MatchDecisions: make([]decisionJSON, len(decisions)),
		Payment: paymentJSON{
			Method: o.PaymentMethod, Code: o.PaymentCode, PaidAmount: recon.MoneyText(o.PaidAmount),
			PaidAt: h.nullableTime(o.PaidAt), CancelledAt: h.nullableTime(o.CancelledAt),
			VoidedAt: h.nullableTime(o.VoidedAt), CheckoutURL: checkoutPath(m, o.InvoiceNumber),
		},
	}
	if o.VirtualAccount != "" {
		d.Payment.VirtualAccount = &o.VirtualAccount
	}
	if o.BankAccountID != 0 {
		b, err := h.Store.BankAccount(ctx, m.Tenant, o.BankAccountID)
		switch recon.ErrorCode(err) {
		case "":
			d.Payment.BankAccount = &bankAccountJSON{ID: b.ID, BankName: b.BankName, AccountNumber: b.AccountNumber, HolderName: b.HolderName}
		case recon.ENOTFOUND: // the account was removed: show none
		default:
			return err
		}
	}
	status := "APPROVED"
	if !o.VoidedAt.IsZero() {
		status = "VOIDED"
	}
	for i, md := range decisions {
		d.MatchDecisions[i] = decisionJSON{
			ID: strconv.FormatInt(md.ID, 10), TransactionID: strconv.FormatInt(md.TransactionID, 10),
			Outcome: md.Outcome, Rule: md.Rule, Code: md.Code, Amount: recon.MoneyText(md.Amount),
			OrderAmount: recon.MoneyText(md.OrderAmount), PaidTotal: recon.MoneyText(md.PaidTotal),
			Reason: md.Reason, At: h.localTime(md.CreatedAt),
		}
		if recon.PaysOrder(md.Outcome) {
			d.Transactions = append(d.Transactions, transactionJSON{
				ID: strconv.FormatInt(md.TransactionID, 10), PaymentMethod: "BANK_TRANSFER", TransactionType: "PAYMENT",
				TransactionAmount: recon.MoneyText(md.Amount), TransactionCurrency: o.Currency,
				TransactionStatus: status, AuthenticationStatus: "AUTHENTICATION_NOT_NEEDED",
				TransactionDate: h.localTime(md.CreatedAt),
			})
		}
	}
	web.WriteJSON(w, http.StatusOK, struct {
		Data orderDetailJSON `json:"data"`
	}{d})
	return nil
}

// invoiceBody is the body of POST /v1/order/cancel and /v1/order/voidTransaction.
type invoiceBody struct {
	InvoiceNumber *string `json:"order_invoice_number"`
}

func readInvoice(r *http.Request) (string, error) {
	var b invoiceBody
	if err := web.DecodeJSON(r, &b); err != nil {
		return "", err
	}
	if b.InvoiceNumber == nil || *b.InvoiceNumber == "" {
		return "", recon.FieldError("order_invoice_number", "order_invoice_number is required")
	}
	return *b.InvoiceNumber, nil
}

// actionJSON is the answer of cancel and void: the public API's message, the
// success flag the PHP SDK's examples read, and the order as it now is.
type actionJSON struct {
	Success bool      `json:"success"`
	Message string    `json:"message"`
	Data    orderJSON `json:"data"`
}

// cancelOrder serves POST /v1/order/cancel: an unpaid order becomes
// CANCELLED, no IPN. A paid or already cancelled order is a 409.
func (h *Handler) cancelOrder(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	invoice, err := readInvoice(r)
	if err != nil {
		return err
	}
	o, err := h.Checkout.Cancel(r.Context(), m.Tenant, invoice)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, actionJSON{true, "Đã hủy đơn hàng thành công", h.toOrderJSON(o, m)})
	return nil
}

// voidOrder serves POST /v1/order/voidTransaction: a paid order becomes
// CANCELLED and a TRANSACTION_VOID IPN is enqueued with the change. An
// unpaid or already cancelled order is a 409.
func (h *Handler) voidOrder(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error {
	invoice, err := readInvoice(r)
	if err != nil {
		return err
	}
	o, err := h.Checkout.Void(r.Context(), m.Tenant, invoice)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, actionJSON{true, "Đã hủy giao dịch thành công", h.toOrderJSON(o, m)})
	return nil
}
