package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"rsc.io/qr"

	"recon"
	"recon/orders"
	"recon/refunds"
	"recon/web"
)

// API v2's refunds in the dashboard (docs/dashboard.md, Refunds; the rules:
// docs/api-v2.md, Refunds): the list, a refund's page with what the
// merchant sends while it is pending (and the receiver's VietQR), a refund
// requested from an order's or a transaction's page, approval and rejection
// by another Admin or SuperAdmin than the requester, cancellation, and the
// company's approval threshold on the settings page. Every action goes
// through a confirmation page (confirm.go). Handler.Refunds nil hides all of
// it: the pages are 404.

// refundPerPage is the refunds list's page size.
const refundPerPage = 20

// maxShownRefunds bounds the refunds an order's or a transaction's page lists.
const maxShownRefunds = 50

func (h *Handler) registerRefunds(mux *web.Mux) {
	mux.Handle("GET /dashboard/refunds", h.page(recon.ActionReadRefunds, h.refundList))
	mux.Handle("GET /dashboard/refunds/{id}", h.page(recon.ActionReadRefunds, h.refundPage))
	mux.Handle("GET /dashboard/refunds/{id}/qr.png", h.page(recon.ActionReadRefunds, h.refundQR))
	for _, a := range []struct {
		name   string
		action recon.Action
	}{{"approve", recon.ActionApproveRefunds}, {"reject", recon.ActionApproveRefunds}, {"cancel", recon.ActionRequestRefunds}} {
		mux.Handle("GET /dashboard/refunds/{id}/"+a.name, h.page(a.action, h.refundStep(a.name, false)))
		mux.HandleLimited("POST /dashboard/refunds/{id}/"+a.name, h.form(a.action, h.refundStep(a.name, true)), formLimit)
	}
	mux.Handle("GET /dashboard/refund/new", h.page(recon.ActionRequestRefunds, h.newRefund))
	mux.HandleLimited("POST /dashboard/refund/new", h.form(recon.ActionRequestRefunds, h.requestRefund), formLimit)
	mux.HandleLimited("POST /dashboard/settings/refund-threshold", h.form(recon.ActionManageCompany, h.saveThreshold), formLimit)
	mux.Handle("GET /dashboard/order/va-qr.png", h.page(recon.ActionReadMoney, h.vaQR))
}

// refundText is err as the merchant reads it, in the page's language: a
// refund rule (422) or a refused field by its message key, the person who
// may not decide on their own refund; else the error's own message.
func refundText(l lang, err error) string {
	if rule := recon.RefundRule(err); rule != "" {
		return l.T("rr_" + rule)
	}
	var e *recon.Error
	if errors.As(err, &e) {
		switch {
		case e.Code == recon.EFORBIDDEN && strings.HasPrefix(e.Message, "you requested"):
			return l.T("rr_own")
		case e.Code == recon.EINVALID && len(e.Fields) == 1:
			for f := range e.Fields {
				if k := "rf_" + strings.ReplaceAll(f, ".", "_"); messages[l][k] != "" {
					return l.T(k)
				}
			}
		}
	}
	return recon.ErrorMessage(err)
}

// refusedStatus is the status of a refused form: 422 for a broken rule
// (web.ErrorStatus keeps API v1's 400 for it), else the error's.
func refusedStatus(err error) int {
	if recon.ErrorCode(err) == recon.EUNPROCESSABLE {
		return http.StatusUnprocessableEntity
	}
	status, _ := web.ErrorStatus(err)
	return status
}

// actorText names who requested or decided a refund: the person's e-mail,
// else the client.
func actorText(a recon.RefundActor) string {
	if a.Email != "" {
		return a.Email
	}
	return a.ClientID
}

// refundRow is a refund as the lists show it.
type refundRow struct {
	R       *recon.Refund
	Created string
	By      string
}

func (h *Handler) refundRows(list []*refunds.Result) []refundRow {
	out := make([]refundRow, len(list))
	for i, r := range list {
		out[i] = refundRow{R: r.Refund, Created: h.timeText(r.Refund.CreatedAt), By: actorText(r.Refund.RequestedBy)}
	}
	return out
}

type refundsView struct {
	Query    url.Values
	Statuses []string
	Error    string
	Rows     []refundRow
	Pager    pager
}

// refundList serves GET /dashboard/refunds: the tenant's refunds, newest
// first, filtered by status, dates (created, inclusive, business time
// zone), order (invoice number) and transaction (id).
func (h *Handler) refundList(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	query := trimmedQuery(r, "status", "from_date", "to_date", "order", "transaction", "page")
	v := &refundsView{Query: query, Statuses: recon.RefundStatuses}
	f, err := h.refundFilter(r, q, query)
	var list []*refunds.Result
	var total int64
	if err == nil {
		list, total, err = h.Refunds.List(r.Context(), q.caller, f)
	}
	status := http.StatusOK
	switch recon.ErrorCode(err) {
	case "":
		v.Rows = h.refundRows(list)
		v.Pager = newPager(r.URL.Path, query, "page", f.Page, f.PerPage, total)
	case recon.EINVALID:
		v.Error, status = h.filterText(q.lang, err), http.StatusBadRequest
	default:
		return err
	}
	h.render(w, r, status, "refunds", h.data(r, q, "refunds", v))
	return nil
}

// trimmedQuery is r's query parameters keys, trimmed, the empty ones left
// out: what a list page keeps in its links (pager, filters).
func trimmedQuery(r *http.Request, keys ...string) url.Values {
	query := url.Values{}
	for _, k := range keys {
		if v := strings.TrimSpace(r.URL.Query().Get(k)); v != "" {
			query.Set(k, v)
		}
	}
	return query
}

// filterText is a refused filter in the page's language.
func (h *Handler) filterText(l lang, err error) string {
	var e *recon.Error
	if errors.As(err, &e) {
		for f := range e.Fields {
			if k := "rl_" + f; messages[l][k] != "" {
				return l.T(k)
			}
		}
	}
	return recon.ErrorMessage(err)
}

func (h *Handler) refundFilter(r *http.Request, q *request, query url.Values) (recon.RefundFilter, error) {
	f := recon.RefundFilter{Status: query.Get("status"), From: query.Get("from_date"), To: query.Get("to_date"),
		Location: h.Location, Page: 1, PerPage: refundPerPage}
	if f.Status != "" && !slices.Contains(recon.RefundStatuses, f.Status) {
		return f, recon.FieldError("status", "status must be one of %s", strings.Join(recon.RefundStatuses, ", "))
	}
	for _, d := range []struct{ field, v string }{{"from_date", f.From}, {"to_date", f.To}} {
		if _, err := time.Parse(recon.DateLayout, d.v); d.v != "" && (err != nil || len(d.v) != 10) {
			return f, recon.FieldError(d.field, "dates must be in the form YYYY-MM-DD")
		}
	}
	if p := query.Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > recon.MaxTransactionPage {
			return f, recon.FieldError("page", "page must be an integer from 1 to %d", recon.MaxTransactionPage)
		}
		f.Page = n
	}
	if t := query.Get("transaction"); t != "" {
		id, err := strconv.ParseInt(t, 10, 64)
		if err != nil || id <= 0 {
			return f, recon.FieldError("transaction", "transaction must be a transaction's id")
		}
		f.TransactionID = id
	}
	if inv := query.Get("order"); inv != "" {
		o, err := h.Store.Order(r.Context(), q.caller.Tenant, inv)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return f, recon.FieldError("order", "there is no order with invoice number %q", inv)
		} else if err != nil {
			return f, err
		}
		f.OrderID = o.ID
	}
	return f, nil
}

// refundView is a refund's page.
type refundView struct {
	R                    *recon.Refund
	Created, Updated     string
	RequestedBy, Decided string
	Order                *recon.Order // nil when the refund is of a transaction only
	Instructions         *recon.RefundInstructions
	From                 *recon.BankAccount // the account the money leaves, with the instructions
	CanApprove, Own      bool               // Own: the viewer requested it (no approval buttons)
	CanCancel            bool
	Error                string
}

// refundPage serves GET /dashboard/refunds/{id}. Another tenant's (or
// mode's) id is 404.
func (h *Handler) refundPage(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.renderRefund(w, r, q, r.PathValue("id"), http.StatusOK, "")
}

func (h *Handler) renderRefund(w http.ResponseWriter, r *http.Request, q *request, id string, status int, msg string) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	ctx := r.Context()
	res, err := h.Refunds.Get(ctx, q.caller, id)
	if err != nil {
		return err
	}
	rf := res.Refund
	v := &refundView{R: rf, Created: h.timeText(rf.CreatedAt), Updated: h.timeText(rf.UpdatedAt), RequestedBy: actorText(rf.RequestedBy),
		Decided: actorText(rf.DecidedBy), Instructions: res.Instructions, Error: msg}
	if rf.OrderID != 0 {
		if v.Order, err = h.Store.OrderByID(ctx, q.caller.Tenant, rf.OrderID); err != nil {
			return err
		}
	}
	if in := res.Instructions; in != nil {
		if v.From, err = h.Store.BankAccount(ctx, q.caller.Tenant, in.BankAccountID); err != nil {
			return err
		}
	}
	v.Own = q.caller.User != nil && rf.RequestedBy.UserID == q.caller.User.ID
	v.CanApprove = rf.Status == recon.RefundPendingApproval && q.caller.May(recon.ActionApproveRefunds) && !v.Own
	v.CanCancel = recon.RefundAllows(rf.Status, recon.RefundCancel) && q.caller.May(recon.ActionRequestRefunds)
	h.render(w, r, status, "refund", h.data(r, q, "refund", v))
	return nil
}

// refundQR serves GET /dashboard/refunds/{id}/qr.png: the VietQR of the
// receiver's account with the amount and the reference, while the merchant
// must send it (recon.InstructionsOf); 404 otherwise.
func (h *Handler) refundQR(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	res, err := h.Refunds.Get(r.Context(), q.caller, r.PathValue("id"))
	if err != nil {
		return err
	}
	if res.Instructions == nil || res.Instructions.QR == "" {
		return recon.Errorf(recon.ENOTFOUND, "this refund has no VietQR now")
	}
	return writeQR(w, res.Instructions.QR)
}

// writeQR answers a QR code of payload as a PNG.
func writeQR(w http.ResponseWriter, payload string) error {
	code, err := qr.Encode(payload, qr.M)
	if err != nil {
		return err
	}
	code.Scale = 6
	png := code.PNG()
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	_, _ = w.Write(png)
	return nil
}

// refundStep serves GET (the confirmation) and POST (with confirm=yes: the
// action) of /dashboard/refunds/{id}/{approve,reject,cancel}. Approving
// and rejecting one's own refund is refused (403) on both, as the service
// refuses it; an action the refund's state does not allow shows the
// refund's page with the reason (422).
func (h *Handler) refundStep(action string, post bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, q *request) error {
		if h.Refunds == nil {
			return errNotFound()
		}
		ctx := r.Context()
		id := r.PathValue("id")
		res, err := h.Refunds.Get(ctx, q.caller, id)
		if err != nil {
			return err
		}
		rf := res.Refund
		event := recon.RefundEvent(action)
		if action != "cancel" && q.caller.User != nil && rf.RequestedBy.UserID == q.caller.User.ID {
			h.writeErrorPage(w, r, q, http.StatusForbidden, q.lang.T("rr_own"))
			return nil
		}
		if !recon.RefundAllows(rf.Status, event) {
			return h.renderRefund(w, r, q, rf.ID, http.StatusUnprocessableEntity, q.lang.T("rr_invalid_state"))
		}
		if !post || !confirmed(r) {
			after := map[string]string{"approve": recon.RefundPending, "reject": recon.RefundRejected, "cancel": recon.RefundCancelled}[action]
			return h.renderConfirm(w, r, q, &confirmView{Title: "c_refund_" + action, Intro: "c_refund_" + action + "_intro",
				Action: "/dashboard/refunds/" + rf.ID + "/" + action, Button: "rb_" + action, Back: "/dashboard/refunds/" + rf.ID,
				Items: []confirmItem{
					{"reference", rf.Reference, "c-reference"},
					{"amount", q.lang.Money(rf.Amount), "c-amount"},
					{"rf_reason_label", rf.Reason, "c-reason"},
					{"rf_receiver", receiverText(rf.Receiver), "c-receiver"},
					{"rf_requested_by", actorText(rf.RequestedBy), "c-requested-by"},
					{"status", q.lang.T("rs_" + rf.Status), "c-status"},
					{"c_status_after", q.lang.T("rs_" + after), "c-after"},
				}})
		}
		audited := map[string]string{"approve": recon.AuditRefundApprove, "reject": recon.AuditRefundReject, "cancel": recon.AuditRefundCancel}[action]
		after := map[string]string{"approve": recon.RefundPending, "reject": recon.RefundRejected, "cancel": recon.RefundCancelled}[action]
		err = h.audit(r, q, audited, "refund "+rf.ID, []recon.AuditChange{{Field: "status", Before: rf.Status, After: after}, {Field: "amount", After: strconv.FormatInt(rf.Amount, 10)}},
			func(ctx context.Context) error {
				var err error
				switch action {
				case "approve":
					_, err = h.Refunds.Approve(ctx, q.caller, rf.ID)
				case "reject":
					_, err = h.Refunds.Reject(ctx, q.caller, rf.ID)
				default:
					_, err = h.Refunds.Cancel(ctx, q.caller, rf.ID)
				}
				return err
			})
		switch {
		case recon.RefundRule(err) != "":
			return h.renderRefund(w, r, q, rf.ID, http.StatusUnprocessableEntity, refundText(q.lang, err))
		case recon.ErrorCode(err) == recon.EFORBIDDEN:
			h.writeErrorPage(w, r, q, http.StatusForbidden, refundText(q.lang, err))
			return nil
		case err != nil:
			return err
		}
		http.Redirect(w, r, "/dashboard/refunds/"+rf.ID, http.StatusSeeOther)
		return nil
	}
}

// receiverText is a receiver on one line: account, name, bank BIN.
func receiverText(rc recon.RefundReceiver) string {
	if !rc.Known() {
		return ""
	}
	return rc.AccountNumber + " · " + rc.AccountName + " · " + rc.BankBIN
}

// refundForm is the request form, as typed.
type refundForm struct {
	Order, Transaction                  string // invoice number, transaction id: one of them
	Amount, Reason                      string
	BankBIN, AccountNumber, AccountName string
}

func readRefundForm(f url.Values) refundForm {
	g := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	return refundForm{Order: g("order"), Transaction: g("transaction"), Amount: g("amount"), Reason: g("reason"),
		BankBIN: g("bank_bin"), AccountNumber: g("account_number"), AccountName: g("account_name")}
}

func (f refundForm) fields() [][2]string {
	return [][2]string{{"order", f.Order}, {"transaction", f.Transaction}, {"amount", f.Amount}, {"reason", f.Reason},
		{"bank_bin", f.BankBIN}, {"account_number", f.AccountNumber}, {"account_name", f.AccountName}}
}

// parseAmount reads an amount typed in VND: digits, with "." or "," or
// spaces grouping them; "" is 0 (everything refundable).
func parseAmount(field, s string) (int64, error) {
	s = strings.NewReplacer(".", "", ",", "", " ", "").Replace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > recon.MaxAmount || strings.Trim(s, "0123456789") != "" {
		return 0, recon.FieldError(field, "%s must be a whole number of VND from 1 to %d", field, int64(recon.MaxAmount))
	}
	return n, nil
}

// refundNewView is the request form's page.
type refundNewView struct {
	Form       refundForm
	Order      *recon.Order
	T          *recon.Transaction
	Refundable int64
	Threshold  int64
	Error      string
}

// newRefund serves GET /dashboard/refund/new?order=INVOICE or
// ?transaction=ID: the request form, with what is refundable.
func (h *Handler) newRefund(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.renderRefundForm(w, r, q, readRefundForm(r.URL.Query()), http.StatusOK, "")
}

// refundTarget reads the order or the transaction of the form (404 when
// another tenant's or unknown) and the internal ids of the request.
func (h *Handler) refundTarget(r *http.Request, q *request, f refundForm) (*recon.Order, *recon.Transaction, error) {
	ctx := r.Context()
	switch {
	case f.Order != "" && f.Transaction == "":
		o, err := h.Store.Order(ctx, q.caller.Tenant, f.Order)
		return o, nil, err
	case f.Transaction != "" && f.Order == "":
		id, err := strconv.ParseInt(f.Transaction, 10, 64)
		if err != nil || id <= 0 {
			return nil, nil, errNotFound()
		}
		t, err := h.Store.Transaction(ctx, q.caller.Tenant, id)
		return nil, t, err
	}
	return nil, nil, errNotFound()
}

func (h *Handler) renderRefundForm(w http.ResponseWriter, r *http.Request, q *request, f refundForm, status int, msg string) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	o, t, err := h.refundTarget(r, q, f)
	if err != nil {
		return err
	}
	v := &refundNewView{Form: f, Order: o, T: t, Error: msg}
	var oid, tid int64
	if o != nil {
		oid = o.ID
	} else {
		tid = t.ID
	}
	if v.Refundable, err = h.Refunds.Refundable(r.Context(), q.caller, oid, tid); err != nil {
		return err
	}
	if v.Threshold, err = h.Refunds.Threshold(r.Context(), q.caller); err != nil {
		return err
	}
	h.render(w, r, status, "refund_new", h.data(r, q, "rf_new", v))
	return nil
}

// requestRefund serves POST /dashboard/refund/new: the form checked, then
// its confirmation page (what is refunded, to whom, whether it waits for
// approval), then with confirm=yes the request (refunds.Service.Request),
// and the refund's page. A refused request shows the form again with the
// reason in the page's language (400 a field, 422 a refund rule).
func (h *Handler) requestRefund(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	ctx := r.Context()
	f := readRefundForm(r.PostForm)
	o, t, err := h.refundTarget(r, q, f)
	if err != nil {
		return err
	}
	in := recon.RefundRequest{Reason: f.Reason, By: recon.ActorOf(q.caller),
		Receiver: recon.RefundReceiver{BankBIN: f.BankBIN, AccountNumber: f.AccountNumber, AccountName: f.AccountName}}
	if o != nil {
		in.OrderID = o.ID
	} else {
		in.TransactionID = t.ID
	}
	in.Amount, err = parseAmount("amount", f.Amount)
	if err == nil {
		err = in.Validate()
	}
	var refundable, threshold int64
	if err == nil {
		if refundable, err = h.Refunds.Refundable(ctx, q.caller, in.OrderID, in.TransactionID); err != nil {
			return err
		}
		if threshold, err = h.Refunds.Threshold(ctx, q.caller); err != nil {
			return err
		}
		err = precheckRefund(&in, refundable)
	}
	if err == nil && !confirmed(r) {
		amount := in.Amount
		if amount == 0 {
			amount = refundable
		}
		after := recon.RefundPending
		if threshold > 0 && amount >= threshold {
			after = recon.RefundPendingApproval
		}
		var items []confirmItem
		var back string
		if o != nil {
			items = append(items, confirmItem{"order", o.InvoiceNumber, "c-invoice"})
			back = "/dashboard/order?" + url.Values{"invoice": {o.InvoiceNumber}}.Encode()
		} else {
			items = append(items, confirmItem{"transaction", strconv.FormatInt(t.ID, 10), "c-transaction"})
			back = "/dashboard/transactions/" + strconv.FormatInt(t.ID, 10)
		}
		items = append(items,
			confirmItem{"rf_refundable", q.lang.Money(refundable), "c-refundable"},
			confirmItem{"amount", q.lang.Money(amount), "c-amount"},
			confirmItem{"rf_reason_label", in.Reason, "c-reason"},
			confirmItem{"rf_receiver", receiverText(in.Receiver), "c-receiver"},
			confirmItem{"c_status_after", q.lang.T("rs_" + after), "c-after"})
		return h.renderConfirm(w, r, q, &confirmView{Title: "c_refund_request", Intro: "c_refund_request_intro", Items: items,
			Action: "/dashboard/refund/new", Fields: f.fields(), Button: "rb_request", Back: back})
	}
	var res *refunds.Result
	if err == nil {
		res, err = h.Refunds.Request(ctx, q.caller, in)
	}
	if err == nil {
		err = h.auditAfter(r, q, recon.AuditRefundRequest, "refund "+res.Refund.ID, recon.AuditRefundRequested(res.Refund))
	}
	switch recon.ErrorCode(err) {
	case "":
	case recon.EINVALID, recon.EUNPROCESSABLE:
		return h.renderRefundForm(w, r, q, f, refusedStatus(err), refundText(q.lang, err))
	default:
		return err
	}
	http.Redirect(w, r, "/dashboard/refunds/"+res.Refund.ID, http.StatusSeeOther)
	return nil
}

// precheckRefund applies, before the confirmation, the rules the store
// applies again under lock (recon.NewRefund): something to refund, an amount
// within it, a receiver. Nothing received and all refunded read the same
// here (refundable 0); the store tells them apart.
func precheckRefund(in *recon.RefundRequest, refundable int64) error {
	switch {
	case refundable <= 0:
		return recon.RuleError(recon.RuleAlreadyRefunded, "nothing is left to refund")
	case in.Amount > refundable:
		return recon.RuleError(recon.RuleAmountExceedsRefundable, "amount %d VND exceeds the refundable %d VND", in.Amount, refundable)
	case !in.Receiver.Known():
		return recon.RuleError(recon.RuleReceiverRequired, "receiver is required")
	}
	return nil
}

// saveThreshold serves POST /dashboard/settings/refund-threshold: the
// company's refund approval threshold in VND, empty for none.
func (h *Handler) saveThreshold(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Refunds == nil {
		return errNotFound()
	}
	typed := strings.TrimSpace(r.PostForm.Get("threshold"))
	vnd, err := parseAmount("refund_approval_threshold", typed)
	if err == nil {
		err = h.audit(r, q, recon.AuditRefundThreshold, "", []recon.AuditChange{{Field: "refund_approval_threshold", After: strconv.FormatInt(vnd, 10)}},
			func(ctx context.Context) error { return h.Refunds.SetThreshold(ctx, q.caller, vnd) })
	}
	if recon.ErrorCode(err) == recon.EINVALID {
		return h.renderSettings(w, r, q, http.StatusBadRequest, &settingsView{ThresholdErr: q.lang.T("rt_invalid"), ThresholdForm: &typed})
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/settings?saved=threshold#refunds", http.StatusSeeOther)
	return nil
}

// vaQR serves GET /dashboard/order/va-qr.png?invoice=&va=: the VietQR of
// an active virtual account of the order (recon.VAQRText, as the checkout
// page and API v2 show it); 404 otherwise.
func (h *Handler) vaQR(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.V2Orders == nil {
		return errNotFound()
	}
	o, err := h.Store.Order(r.Context(), q.caller.Tenant, r.URL.Query().Get("invoice"))
	if err != nil {
		return err
	}
	view, err := h.V2Orders.Get(r.Context(), q.caller.Tenant, o.PublicID)
	if err != nil {
		return err
	}
	for _, va := range view.VAs {
		if va.Number == r.URL.Query().Get("va") && va.ActiveAt(h.now()) {
			if p := recon.VAQRText(va, view.Bank, o); p != "" {
				return writeQR(w, p)
			}
		}
	}
	return recon.Errorf(recon.ENOTFOUND, "this virtual account has no VietQR now")
}

// orderV2View is what an order's page shows of API v2 (docs/api-v2.md,
// Orders; Refunds): its v2 status, buyer, expiry and virtual accounts (with
// Handler.V2Orders), its refunds and what is refundable (with
// Handler.Refunds).
type orderV2View struct {
	HasOrders  bool
	Status     string // recon.Order.V2Status
	Expires    string
	VAs        []vaRow
	HasRefunds bool
	Refunds    []refundRow
	Refundable int64
	CanRefund  bool
}

// vaRow is a virtual account on its order's page; QR is the image's URL
// ("" when it has none now).
type vaRow struct {
	VA      *recon.VirtualAccount
	Expires string
	QR      string
}

func (h *Handler) orderV2(r *http.Request, q *request, o *recon.Order) (*orderV2View, error) {
	ctx := r.Context()
	v := &orderV2View{HasOrders: h.V2Orders != nil, HasRefunds: h.Refunds != nil && q.caller.May(recon.ActionReadRefunds),
		Status: o.V2Status(), Expires: h.timeText(o.ExpiresAt)}
	if h.V2Orders != nil {
		view, err := h.V2Orders.Get(ctx, q.caller.Tenant, o.PublicID)
		if recon.ErrorCode(err) == recon.ENOTFOUND { // no v2 id: the page without accounts
			view, err = &orders.View{}, nil
		}
		if err != nil {
			return nil, err
		}
		for _, va := range view.VAs {
			row := vaRow{VA: va, Expires: h.timeText(va.ExpiresAt)}
			if va.ActiveAt(h.now()) && recon.VAQRText(va, view.Bank, o) != "" {
				row.QR = "/dashboard/order/va-qr.png?" + url.Values{"invoice": {o.InvoiceNumber}, "va": {va.Number}}.Encode()
			}
			v.VAs = append(v.VAs, row)
		}
	}
	if v.HasRefunds {
		list, _, err := h.Refunds.List(ctx, q.caller, recon.RefundFilter{OrderID: o.ID, PerPage: maxShownRefunds})
		if err != nil {
			return nil, err
		}
		v.Refunds = h.refundRows(list)
		if v.Refundable, err = h.Refunds.Refundable(ctx, q.caller, o.ID, 0); err != nil {
			return nil, err
		}
		v.CanRefund = v.Refundable > 0 && q.caller.May(recon.ActionRequestRefunds)
	}
	return v, nil
}

// txRefundsView is what a transaction's page shows of its refunds: those
// drawing on it, and what is refundable of it (an incoming one).
type txRefundsView struct {
	Rows       []refundRow
	Refundable int64
	CanRefund  bool
}

func (h *Handler) transactionRefunds(r *http.Request, q *request, t *recon.Transaction) (*txRefundsView, error) {
	if h.Refunds == nil || !q.caller.May(recon.ActionReadRefunds) {
		return nil, nil
	}
	ctx := r.Context()
	list, _, err := h.Refunds.List(ctx, q.caller, recon.RefundFilter{TransactionID: t.ID, PerPage: maxShownRefunds})
	if err != nil {
		return nil, err
	}
	v := &txRefundsView{Rows: h.refundRows(list)}
	if t.AmountIn > 0 {
		if v.Refundable, err = h.Refunds.Refundable(ctx, q.caller, 0, t.ID); err != nil {
			return nil, err
		}
	}
	v.CanRefund = v.Refundable > 0 && q.caller.May(recon.ActionRequestRefunds)
	return v, nil
}
