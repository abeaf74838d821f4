package dashboard

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/checkout"
)

// The sandbox panel (docs/testmode.md, The dashboard's sandbox): in test
// mode, create a test order (a checkout order with its payment code, or an
// API v2 order with its virtual account), play a payer's transfer, pay an
// order, fire a hub event, and list the sandbox banks' identities. Every
// write goes to the test tenant: in live mode the page only offers the
// switch to test data, and its forms are refused, whatever the server's
// --sandbox (the API's live sandbox transfers on a --sandbox server are the
// API's, not the page's).

type sandboxView struct {
	// Live: the page offers the switch to test data, nothing else.
	Live       bool
	Accounts   []*recon.BankAccount
	Events     []string
	Identities []HubIdentity
	Done       string // message key of what was just done
	Result     *recon.IngestResult
	Err        string
	Invoice    string
	// Orders: test orders can be made (checkout.Service); V2: with a
	// virtual account too (orders.Service).
	Orders, V2 bool
	// Created is the test order just made (?order=INVOICE), with its
	// virtual account for a v2 one.
	Created   *recon.Order
	CreatedVA *recon.VirtualAccount
	// Form is what the test order form last held (after a refusal).
	Form testOrderForm
}

// testOrderForm is the test order form: kind "checkout" (a v1 order paid
// with its payment code in the memo) or "v2" (an API v2 order paid to its
// virtual account, whose amount mode is VAMode).
type testOrderForm struct {
	Kind, Invoice, Amount, Description, Customer, VAMode string
}

// sandboxOpen reports whether the panel's forms may act for the caller:
// only on test data. The error says to switch (404, as a test-only page
// seen from live data).
func (h *Handler) sandboxOpen(q *request) error {
	if q.caller.Livemode() {
		return recon.Errorf(recon.ENOTFOUND, "the sandbox panel works on test data only: switch to test data")
	}
	return nil
}

// sandbox serves GET /dashboard/sandbox: in live mode the switch to test
// data; in test mode the panel, with the test order just made
// (?order=INVOICE, read from the test tenant) or the hub event's notice.
func (h *Handler) sandbox(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.caller.Livemode() {
		h.render(w, r, http.StatusOK, "sandbox", h.data(r, q, "sandbox", &sandboxView{Live: true}))
		return nil
	}
	qs := r.URL.Query()
	v := &sandboxView{Done: map[string]string{"event": "sb_event_done"}[qs.Get("done")]}
	if inv := qs.Get("order"); inv != "" {
		o, err := h.Store.Order(r.Context(), q.caller.Tenant, inv)
		if err != nil {
			return err // another tenant's order: 404
		}
		v.Created, v.Invoice, v.Done = o, o.InvoiceNumber, "to_done"
		if isV2Order(o) && h.V2Orders != nil {
			view, err := h.V2Orders.Get(r.Context(), q.caller.Tenant, o.PublicID)
			if err != nil {
				return err
			}
			v.CreatedVA = payableVA(view.VAs, h.now())
		}
	}
	return h.renderSandbox(w, r, q, http.StatusOK, v)
}

// isV2Order reports whether o was made by API v2 (orders.Service.Create):
// its payment code is its v2 id, which no memo carries; it is paid through
// its virtual accounts.
func isV2Order(o *recon.Order) bool { return o.PublicID != "" && o.PaymentCode == o.PublicID }

// payableVA is the account a payer would pay now: the first active one.
func payableVA(vas []*recon.VirtualAccount, now time.Time) *recon.VirtualAccount {
	for _, va := range vas {
		if va.ActiveAt(now) {
			return va
		}
	}
	return nil
}

func (h *Handler) renderSandbox(w http.ResponseWriter, r *http.Request, q *request, status int, v *sandboxView) error {
	var err error
	if v.Accounts, err = h.Store.BankAccounts(r.Context(), q.caller.Tenant); err != nil {
		return err
	}
	v.Orders, v.V2 = h.Orders != nil, h.V2Orders != nil
	if v.Form.Kind == "" {
		v.Form = testOrderForm{Kind: "checkout", Amount: "150000", VAMode: recon.VAExact}
	}
	if h.Hub != nil && q.caller.May(recon.ActionHub) {
		v.Events, v.Identities = recon.HubEvents, hubIdentities()
	}
	h.render(w, r, status, "sandbox", h.data(r, q, "sandbox", v))
	return nil
}

// sandboxOrder serves POST /dashboard/sandbox/order: a test order made by
// the services every surface uses (checkout.Service as POST
// /v1/checkout/init, orders.Service as POST /v2/orders), in the test
// tenant only; then the panel shows it, ready to be paid.
func (h *Handler) sandboxOrder(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	f := r.PostForm
	form := testOrderForm{Kind: f.Get("kind"), Invoice: strings.TrimSpace(f.Get("invoice")), Amount: strings.TrimSpace(f.Get("amount")),
		Description: strings.TrimSpace(f.Get("description")), Customer: strings.TrimSpace(f.Get("customer")), VAMode: f.Get("va_mode")}
	refuse := func(key string) error {
		return h.renderSandbox(w, r, q, http.StatusBadRequest, &sandboxView{Err: q.lang.T(key), Form: form})
	}
	if form.Kind != "checkout" && form.Kind != "v2" || form.Kind == "checkout" && h.Orders == nil || form.Kind == "v2" && h.V2Orders == nil {
		return refuse("to_err_kind")
	}
	if form.Kind == "v2" && !slices.Contains(recon.VAModes, form.VAMode) {
		return refuse("to_err_va_mode")
	}
	if form.Invoice == "" {
		form.Invoice = "TEST-" + randomDigits(h.Rand, 8)
	}
	amount, err := parseVND(form.Amount)
	if err != nil {
		return refuse("to_err_amount")
	}
	in := recon.OrderInput{InvoiceNumber: form.Invoice, Amount: amount, Description: form.Description, CustomerID: form.Customer,
		VA: recon.VAInput{AmountMode: form.VAMode}}
	if err := in.Validate(); err != nil {
		return refuse(orderFieldKey(err))
	}
	ctx, tenant := r.Context(), q.caller.Tenant
	if form.Kind == "checkout" {
		_, err = h.Orders.Create(ctx, tenant, checkout.Input{InvoiceNumber: in.InvoiceNumber, Amount: amount,
			Description: in.Description, CustomerID: in.CustomerID, CustomData: "[]", CustomDataSigned: true,
			UserAgent: "Recon dashboard (sandbox)", IPAddress: clientAddress(r)})
	} else {
		_, err = h.V2Orders.Create(ctx, tenant, in)
	}
	switch {
	case recon.ErrorCode(err) == recon.ECONFLICT:
		return refuse("to_err_duplicate")
	case recon.ErrorCode(err) == recon.EINVALID && strings.Contains(recon.ErrorMessage(err), "no bank account"):
		return refuse("to_err_no_account")
	case recon.ErrorCode(err) == recon.EINVALID && strings.Contains(recon.ErrorMessage(err), "payment-code format"):
		return refuse("to_err_paycode")
	case recon.ErrorCode(err) == recon.EINVALID || recon.ErrorCode(err) == recon.EUNPROCESSABLE:
		return refuse(orderFieldKey(err))
	case err != nil:
		return err
	}
	http.Redirect(w, r, "/dashboard/sandbox?order="+url.QueryEscape(form.Invoice), http.StatusSeeOther)
	return nil
}

// orderFieldKey is the message of a refused test order, by the field its
// error names (recon.OrderInput.Validate's names).
func orderFieldKey(err error) string {
	var e *recon.Error
	if errors.As(err, &e) {
		for field := range e.Fields {
			switch {
			case field == "order_invoice_number":
				return "to_err_invoice"
			case field == "amount":
				return "to_err_amount"
			case field == "description" || field == "customer_id":
				return "to_err_text"
			case strings.HasPrefix(field, "va."):
				return "to_err_va_mode"
			}
		}
	}
	return "to_err_other"
}

// parseVND reads a whole VND amount as a person types it: digits, with "."
// or "," or spaces between thousands ("1.500.000").
func parseVND(s string) (int64, error) {
	s = strings.NewReplacer(".", "", ",", "", " ", "", "\u00a0", "").Replace(s)
	if s == "" || strings.Trim(s, "0123456789") != "" || len(s) > 19 {
		return 0, recon.FieldError("amount", "amount must be a whole number of VND")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > recon.MaxAmount {
		return 0, recon.FieldError("amount", "amount must be a whole number of VND from 1 to %d", int64(recon.MaxAmount))
	}
	return n, nil
}

// randomDigits is n decimal digits read from rnd (test invoice numbers).
func randomDigits(rnd io.Reader, n int) string {
	b := make([]byte, n)
	if _, err := io.ReadFull(rnd, b); err != nil {
		panic("dashboard: randomness failed: " + err.Error())
	}
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	return string(b)
}

// sandboxTransfer serves POST /dashboard/sandbox/transfer: an incoming
// transfer through recon.Ingest, as POST /api/v1/sandbox/transfers. With an
// invoice, it pays the order: its payment code as the memo, the amount
// still owed.
func (h *Handler) sandboxTransfer(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	f := r.PostForm
	v := &sandboxView{Invoice: strings.TrimSpace(f.Get("invoice"))}
	account, _ := strconv.ParseInt(f.Get("account"), 10, 64)
	memo, sub := f.Get("memo"), ""
	amount, err := strconv.ParseInt(strings.TrimSpace(f.Get("amount")), 10, 64)
	if v.Invoice != "" {
		o, oerr := h.Store.Order(r.Context(), q.caller.Tenant, v.Invoice)
		if oerr != nil {
			return oerr // another tenant's invoice: 404
		}
		memo, amount, err = o.PaymentCode, o.Amount-o.PaidAmount, nil
		if isV2Order(o) { // paid to its virtual account
			if h.V2Orders == nil {
				return errNotFound()
			}
			view, verr := h.V2Orders.Get(r.Context(), q.caller.Tenant, o.PublicID)
			if verr != nil {
				return verr
			}
			va := payableVA(view.VAs, h.now())
			if va == nil {
				v.Err = q.lang.T("sb_err_no_va")
				return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
			}
			account, memo, sub = va.BankAccountID, "NGUYEN VAN A chuyen tien", ""
			if va.Kind == recon.VAKindMemo {
				memo += " " + va.Number
			} else {
				sub = va.Number
			}
			if va.AmountMode != recon.VAOpen && va.Amount > 0 {
				amount = va.Amount
			}
		}
	}
	if err != nil || amount <= 0 || amount > recon.MaxAmount {
		v.Err = q.lang.T("to_err_amount")
		return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
	}
	now := h.now()
	in := []recon.TransactionInput{{BankAccountID: account, TransactionDate: now.In(h.Location), AmountIn: amount,
		Content: memo, SubAccount: sub, ReferenceNumber: recon.SimulatedReferenceFrom(h.Rand)}}
	res, err := recon.Ingest(r.Context(), h.Store, q.caller.Tenant, now, in)
	if c := recon.ErrorCode(err); c == recon.EINVALID || c == recon.ENOTFOUND {
		v.Err = recon.ErrorMessage(err)
		return h.renderSandbox(w, r, q, http.StatusBadRequest, v)
	} else if err != nil {
		return err
	}
	if h.Kick != nil {
		h.Kick()
	}
	v.Result, v.Done = &res[0], "sb_transfer_done"
	return h.renderSandbox(w, r, q, http.StatusOK, v)
}

// sandboxHubEvent serves POST /dashboard/sandbox/hub-event: the event made
// to happen by linking.Service.Simulate, as `recon trigger`.
func (h *Handler) sandboxHubEvent(w http.ResponseWriter, r *http.Request, q *request) error {
	if err := h.sandboxOpen(q); err != nil {
		return err
	}
	if h.Hub == nil {
		return errNotFound()
	}
	_, err := h.Hub.Simulate(r.Context(), q.caller.Tenant, true, r.PostForm.Get("event")) // the test tenant's: sandbox banks
	if c := recon.ErrorCode(err); c == recon.EINVALID || c == recon.EUNAVAILABLE {
		return h.renderSandbox(w, r, q, http.StatusBadRequest, &sandboxView{Err: recon.ErrorMessage(err)})
	} else if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/sandbox?done=event", http.StatusSeeOther)
	return nil
}
