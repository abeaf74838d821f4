package apiv2

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"slices"
	"time"

	"rsc.io/qr"

	"recon"
	"recon/orders"
	"recon/web"
)

// The routes of orders and virtual accounts (docs/api-v2.md, Orders and
// Virtual accounts), each a call of the orders service.
func (h *Handler) orderRoutes(r *routes) {
	r.add("POST /v2/orders", h.createOrder, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("GET /v2/orders", h.listOrders, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
	r.add("GET /v2/orders/{id}", h.showOrder, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
	r.add("POST /v2/orders/{id}/cancel", h.cancelOrder, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("POST /v2/orders/{id}/virtual-accounts", h.addVA, recon.ScopeOrderWrite, recon.ActionWriteOrders, KeyOptional)
	r.add("DELETE /v2/orders/{id}/virtual-accounts/{va_number}", h.cancelVA, recon.ScopeOrderWrite, recon.ActionWriteOrders, NoKey)
	r.add("GET /v2/virtual-accounts", h.listVAs, recon.ScopeOrderRead, recon.ActionReadOrders, NoKey)
}

// orderJSON is an order as API v2 shows it.
type orderJSON struct {
	ID                 string       `json:"id"`
	OrderInvoiceNumber string       `json:"order_invoice_number"`
	Amount             int64        `json:"amount"`
	PaidAmount         int64        `json:"paid_amount"`
	RefundedAmount     int64        `json:"refunded_amount"`
	Status             string       `json:"status"`
	CustomerID         *string      `json:"customer_id"`
	Description        *string      `json:"description"`
	Buyer              *recon.Buyer `json:"buyer"`
	BankAccountID      *int64       `json:"bank_account_id"`
	VirtualAccounts    []vaJSON     `json:"virtual_accounts"`
	CreatedAt          string       `json:"created_at"`
	PaidAt             *string      `json:"paid_at"`
	ExpiresAt          *string      `json:"expires_at"`
}

// vaJSON is a virtual account as API v2 shows it.
type vaJSON struct {
	VANumber      string  `json:"va_number"`
	OrderID       string  `json:"order_id"`
	Kind          string  `json:"kind"`
	HolderName    string  `json:"holder_name"`
	BankAccountID int64   `json:"bank_account_id"`
	Amount        *int64  `json:"amount"`
	AmountMode    string  `json:"amount_mode"`
	Status        string  `json:"status"`
	ExpiresAt     string  `json:"expires_at"`
	CreatedAt     string  `json:"created_at"`
	QR            *qrJSON `json:"qr"`
}

// qrJSON is the VietQR of a virtual account: its EMVCo payload, which any
// QR library renders, and the image as a data: URL.
type qrJSON struct {
	Payload  string  `json:"payload"`
	ImageURL *string `json:"image_url"`
}

func (h *Handler) timeText(t time.Time) string { return timeIn(t, h.cfg.Location) }

// timeIn is t as API v2 writes a time: RFC 3339 in the business time zone.
func timeIn(t time.Time, loc *time.Location) string { return t.In(loc).Format(time.RFC3339) }

func (h *Handler) optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := h.timeText(t)
	return &s
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h *Handler) orderOf(v *orders.View) orderJSON {
	o := v.Order
	j := orderJSON{ID: o.PublicID, OrderInvoiceNumber: o.InvoiceNumber, Amount: o.Amount, PaidAmount: o.PaidAmount,
		RefundedAmount: o.RefundedAmount, Status: o.V2Status(), CustomerID: optString(o.CustomerID),
		Description: optString(o.Description), CreatedAt: h.timeText(o.CreatedAt), PaidAt: h.optTime(o.PaidAt),
		ExpiresAt: h.optTime(o.ExpiresAt), VirtualAccounts: []vaJSON{}}
	if !o.Buyer.IsZero() {
		b := o.Buyer
		j.Buyer = &b
	}
	if o.BankAccountID != 0 {
		id := o.BankAccountID
		j.BankAccountID = &id
	}
	for _, va := range v.VAs {
		j.VirtualAccounts = append(j.VirtualAccounts, h.vaOf(va, v.Bank, o))
	}
	return j
}

// vaOf shows va; its QR asks for what its order o owes now (nil: the
// account's amount, as when it was made).
func (h *Handler) vaOf(va *recon.VirtualAccount, bank *recon.BankAccount, o *recon.Order) vaJSON {
	j := vaJSON{VANumber: va.Number, OrderID: va.OrderPublicID, Kind: va.Kind, HolderName: va.HolderName, BankAccountID: va.BankAccountID,
		AmountMode: va.AmountMode, Status: va.Status, ExpiresAt: h.timeText(va.ExpiresAt), CreatedAt: h.timeText(va.CreatedAt)}
	if va.AmountMode != recon.VAOpen {
		n := va.Amount
		j.Amount = &n
	}
	if p := recon.VAQRText(va, bank, o); p != "" {
		j.QR = &qrJSON{Payload: p, ImageURL: qrImage(p)}
	}
	return j
}

// qrImage renders a QR payload as a data: URL of a PNG (4 pixels a module),
// which an <img> shows as it is; nil if it does not encode.
func qrImage(payload string) *string {
	code, err := qr.Encode(payload, qr.M)
	if err != nil {
		return nil
	}
	code.Scale = 4
	u := "data:image/png;base64," + base64.StdEncoding.EncodeToString(code.PNG())
	return &u
}

// createOrderBody is POST /v2/orders' body.
type createOrderBody struct {
	OrderInvoiceNumber *string      `json:"order_invoice_number"`
	Amount             *int64       `json:"amount"`
	BankAccountID      *int64       `json:"bank_account_id"`
	Description        string       `json:"description"`
	CustomerID         string       `json:"customer_id"`
	Buyer              *recon.Buyer `json:"buyer"`
	ExpiresIn          *int64       `json:"expires_in"`
	VA                 *struct {
		AmountMode string `json:"amount_mode"`
		HolderName string `json:"holder_name"`
	} `json:"va"`
}

func (h *Handler) createOrder(r *http.Request, c *recon.Caller) (*Answer, error) {
	var b createOrderBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	for _, req := range []struct {
		name string
		set  bool
	}{{"order_invoice_number", b.OrderInvoiceNumber != nil}, {"amount", b.Amount != nil}, {"bank_account_id", b.BankAccountID != nil}} {
		if !req.set {
			return nil, recon.FieldError(req.name, "%s is required", req.name)
		}
	}
	if *b.BankAccountID < 1 {
		return nil, recon.FieldError("bank_account_id", "bank_account_id must be the id of one of the company's bank accounts")
	}
	in := recon.OrderInput{InvoiceNumber: *b.OrderInvoiceNumber, Amount: *b.Amount, BankAccountID: *b.BankAccountID,
		Description: b.Description, CustomerID: b.CustomerID, Buyer: b.Buyer, ExpiresIn: b.ExpiresIn}
	if b.VA != nil {
		in.VA = recon.VAInput{AmountMode: b.VA.AmountMode, HolderName: b.VA.HolderName}
	}
	v, err := h.cfg.Orders.Create(r.Context(), c.Tenant, in)
	if err != nil {
		return nil, err
	}
	return created(h.orderOf(v)), nil
}

// orderParams are GET /v2/orders' query parameters.
var orderParams = []string{"page", "per_page", "status", "customer_id", "q", "from_date", "to_date"}

func (h *Handler) listOrders(r *http.Request, c *recon.Caller) (*Answer, error) {
	q := r.URL.Query()
	if err := recon.CheckParams(q, orderParams); err != nil {
		return nil, err
	}
	p, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	f := recon.OrderFilter{V2Status: q.Get("status"), CustomerID: q.Get("customer_id"), Query: q.Get("q"),
		Page: p.Page, PerPage: p.PerPage, Location: h.cfg.Location}
	if q.Has("status") && !slices.Contains(recon.OrderV2Statuses, f.V2Status) {
		return nil, recon.FieldError("status", "status must be one of pending, partially_paid, paid, cancelled, expired, not %q", f.V2Status)
	}
	if bad := recon.BadText(f.Query, false); bad != "" {
		return nil, recon.FieldError("q", "q %s", bad)
	}
	if err := recon.ParseDateRange(q, &f.From, &f.To); err != nil {
		return nil, err
	}
	list, total, err := h.cfg.Orders.List(recon.Listing(r.Context()), c.Tenant, f)
	if err != nil {
		return nil, err
	}
	out := make([]orderJSON, len(list))
	for i, v := range list {
		out[i] = h.orderOf(v)
	}
	return paged(out, p, total), nil
}

func (h *Handler) showOrder(r *http.Request, c *recon.Caller) (*Answer, error) {
	v, err := h.cfg.Orders.Get(r.Context(), c.Tenant, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return ok(h.orderOf(v)), nil
}

func (h *Handler) cancelOrder(r *http.Request, c *recon.Caller) (*Answer, error) {
	if err := emptyOrObject(r, &struct{}{}); err != nil {
		return nil, err
	}
	v, err := h.cfg.Orders.Cancel(r.Context(), c.Tenant, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return ok(h.orderOf(v)), nil
}

// addVABody is POST /v2/orders/{id}/virtual-accounts' body (every field
// optional: an empty body asks for an exact account).
type addVABody struct {
	Amount     *int64 `json:"amount"`
	AmountMode string `json:"amount_mode"`
	ExpiresIn  *int64 `json:"expires_in"`
	HolderName string `json:"holder_name"`
}

func (h *Handler) addVA(r *http.Request, c *recon.Caller) (*Answer, error) {
	var b addVABody
	if err := emptyOrObject(r, &b); err != nil {
		return nil, err
	}
	mode := b.AmountMode
	if mode == "" && b.Amount != nil {
		mode = recon.VAPartial // an amount of one's own is an installment
	}
	va, err := h.cfg.Orders.AddVA(r.Context(), c.Tenant, r.PathValue("id"), recon.VAInput{AmountMode: mode, Amount: b.Amount, ExpiresIn: b.ExpiresIn, HolderName: b.HolderName})
	if err != nil {
		return nil, err
	}
	return h.vaAnswer(r, c, va, http.StatusCreated)
}

// vaAnswer answers va with status, its QR asking for what its order owes.
func (h *Handler) vaAnswer(r *http.Request, c *recon.Caller, va *recon.VirtualAccount, status int) (*Answer, error) {
	v, err := h.cfg.Orders.Get(r.Context(), c.Tenant, va.OrderPublicID)
	if err != nil {
		return nil, err
	}
	return &Answer{Status: status, Data: h.vaOf(va, v.Bank, v.Order)}, nil
}

func (h *Handler) cancelVA(r *http.Request, c *recon.Caller) (*Answer, error) {
	va, err := h.cfg.Orders.CancelVA(r.Context(), c.Tenant, r.PathValue("id"), r.PathValue("va_number"))
	if err != nil {
		return nil, err
	}
	return h.vaAnswer(r, c, va, http.StatusOK)
}

// vaParams are GET /v2/virtual-accounts' query parameters.
var vaParams = []string{"page", "per_page", "status", "order_id"}

func (h *Handler) listVAs(r *http.Request, c *recon.Caller) (*Answer, error) {
	q := r.URL.Query()
	if err := recon.CheckParams(q, vaParams); err != nil {
		return nil, err
	}
	p, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	f := recon.VAFilter{Status: q.Get("status"), Page: p.Page, PerPage: p.PerPage}
	if q.Has("order_id") {
		v, err := h.cfg.Orders.Get(r.Context(), c.Tenant, q.Get("order_id"))
		if err != nil {
			return nil, err
		}
		f.OrderID = v.Order.ID
	}
	list, total, err := h.cfg.Orders.VirtualAccounts(r.Context(), c.Tenant, f)
	if err != nil {
		return nil, err
	}
	banks, err := h.cfg.Orders.BankAccounts(r.Context(), c.Tenant)
	if err != nil {
		return nil, err
	}
	out := make([]vaJSON, len(list))
	for i, va := range list {
		out[i] = h.vaOf(va, banks[va.BankAccountID], nil)
	}
	return paged(out, p, total), nil
}

// emptyOrObject decodes r's body into v strictly, an empty body as {}.
func emptyOrObject(r *http.Request, v any) error {
	b, err := web.ReadBodyOrEmpty(r)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return err
	}
	return web.Unmarshal(b, v)
}
