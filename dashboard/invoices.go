package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"recon"
	"recon/invoicepdf"
	"recon/web"
)

// E-invoices in the dashboard (docs/dashboard.md, Invoices; the rules:
// docs/invoices.md): the list, an invoice's page with its history (what it
// replaces or adjusts, what replaced or adjusted it), its PDF and signed XML,
// and a paid order's invoices with the button that issues one through a
// confirmation page (confirm.go). An issued invoice never changes
// (docs/invoices.md, The life cycle): no page here edits one. Handler.Invoices nil
// hides all of it (404).

// invoicePerPage is a page of the invoices list; maxShownInvoices bounds an
// order's invoices and an invoice's corrections on their pages.
const (
	invoicePerPage   = 20
	maxShownInvoices = 50
)

func (h *Handler) registerInvoices(mux *web.Mux) {
	mux.Handle("GET /dashboard/invoices", h.page(recon.ActionReadInvoices, h.invoiceList))
	mux.Handle("GET /dashboard/invoices/{ref}", h.page(recon.ActionReadInvoices, h.invoicePage))
	mux.Handle("GET /dashboard/invoices/{ref}/pdf", h.page(recon.ActionReadInvoices, h.invoicePDF))
	mux.Handle("GET /dashboard/invoices/{ref}/xml", h.page(recon.ActionReadInvoices, h.invoiceXML))
	h.registerOrderInvoice(mux)
}

// invoiceRow is one line of a list of invoices.
type invoiceRow struct {
	I       *recon.Invoice
	Created string
}

func (h *Handler) invoiceRows(list []*recon.Invoice) []invoiceRow {
	rows := make([]invoiceRow, 0, len(list))
	for _, inv := range list {
		rows = append(rows, invoiceRow{I: inv, Created: h.timeText(inv.CreatedAt)})
	}
	return rows
}

type invoicesView struct {
	Query    url.Values
	Statuses []string
	Error    string
	Rows     []invoiceRow
	Pager    pager
}

// invoiceList serves GET /dashboard/invoices: the tenant's invoices, newest
// first, filtered by status, paged.
func (h *Handler) invoiceList(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	query := trimmedQuery(r, "status", "page")
	v := &invoicesView{Query: query, Statuses: recon.InvoiceStatuses}
	f := recon.InvoiceFilter{Status: query.Get("status"), Location: h.Location, Page: 1, PerPage: invoicePerPage}
	var err error
	if f.Status != "" && !slices.Contains(recon.InvoiceStatuses, f.Status) {
		err = recon.FieldError("status", "status must be one of %s", strings.Join(recon.InvoiceStatuses, ", "))
	}
	if p := query.Get("page"); p != "" && err == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > recon.MaxTransactionPage {
			err = recon.FieldError("page", "page must be an integer from 1 to %d", recon.MaxTransactionPage)
		}
		f.Page = n
	}
	var list []*recon.Invoice
	var total int64
	if err == nil {
		list, total, err = h.Invoices.List(r.Context(), q.caller, f)
	}
	status := http.StatusOK
	switch recon.ErrorCode(err) {
	case "":
		v.Rows = h.invoiceRows(list)
		v.Pager = newPager(r.URL.Path, query, "page", f.Page, f.PerPage, total)
	case recon.EINVALID:
		v.Error, status = h.filterText(q.lang, err), http.StatusBadRequest
	default:
		return err
	}
	h.render(w, r, status, "invoices", h.data(r, q, "einvoices", v))
	return nil
}

// invoiceView is an invoice's page.
type invoiceView struct {
	I                *recon.Invoice
	Created, Updated string
	Issued           string // the issued date, "" for a draft
	Order            *recon.Order
	Original         *recon.Invoice // the invoice it replaces or adjusts
	Corrections      []invoiceRow   // the invoices that replace or adjust it
	HasXML           bool
}

// invoicePage serves GET /dashboard/invoices/{ref}. Another tenant's (or
// mode's) reference code is 404.
func (h *Handler) invoicePage(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	ctx := r.Context()
	inv, err := h.Invoices.Get(ctx, q.caller, r.PathValue("ref"))
	if err != nil {
		return err
	}
	v := &invoiceView{I: inv, Created: h.timeText(inv.CreatedAt), Updated: h.timeText(inv.UpdatedAt)}
	if !inv.IssuedDate.IsZero() && inv.Number != 0 {
		v.Issued = inv.IssuedDate.Format(recon.DateLayout)
	}
	v.HasXML = inv.Number != 0 && inv.Status != recon.InvoiceDraft
	if inv.OrderID != 0 {
		if v.Order, err = h.Store.OrderByID(ctx, q.caller.Tenant, inv.OrderID); err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
			return err
		}
	}
	if inv.OriginalReferenceCode != "" {
		if v.Original, err = h.Invoices.Get(ctx, q.caller, inv.OriginalReferenceCode); err != nil {
			return err
		}
	}
	later, _, err := h.Invoices.List(ctx, q.caller, recon.InvoiceFilter{Original: inv.ReferenceCode, Location: h.Location, Page: 1, PerPage: maxShownInvoices})
	if err != nil {
		return err
	}
	v.Corrections = h.invoiceRows(later)
	h.render(w, r, http.StatusOK, "invoice", h.data(r, q, "einvoice", v))
	return nil
}

// invoicePDF serves GET /dashboard/invoices/{ref}/pdf: the invoice's PDF
// (invoicepdf), a test mode's stamped as such.
func (h *Handler) invoicePDF(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	ctx := r.Context()
	inv, err := h.Invoices.Get(ctx, q.caller, r.PathValue("ref"))
	if err != nil {
		return err
	}
	var orig *recon.Invoice
	if inv.OriginalReferenceCode != "" {
		if orig, err = h.Invoices.Get(ctx, q.caller, inv.OriginalReferenceCode); err != nil {
			return err
		}
	}
	pdf, err := invoicepdf.Render(inv, invoicepdf.Options{Original: orig, Location: h.Location, Test: !q.caller.Tenant.Live()})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="`+inv.ReferenceCode+`.pdf"`)
	_, _ = w.Write(pdf)
	return nil
}

// invoiceXML serves GET /dashboard/invoices/{ref}/xml: the signed XML; a
// draft has none (404).
func (h *Handler) invoiceXML(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	xml, err := h.Invoices.XML(r.Context(), q.caller, r.PathValue("ref"))
	if err != nil {
		return err
	}
	ref := r.PathValue("ref")
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(ref)+`.xml"`)
	_, _ = w.Write(xml)
	return nil
}

// registerOrderInvoice adds the issue button's steps: GET the
// confirmation, POST (confirm=yes) issues the order's invoice.
func (h *Handler) registerOrderInvoice(mux *web.Mux) {
	mux.Handle("GET /dashboard/order/invoice", h.page(recon.ActionIssueInvoices, h.confirmOrderInvoice))
	mux.HandleLimited("POST /dashboard/order/invoice", h.form(recon.ActionIssueInvoices, h.issueOrderInvoice), formLimit)
}

// orderInvoices are the order page's invoices and whether it shows the
// issue button: only for a paid order and a user who may issue invoices.
func (h *Handler) orderInvoices(r *http.Request, q *request, o *recon.Order) (rows []invoiceRow, shown, canIssue bool, err error) {
	if h.Invoices == nil || !q.caller.May(recon.ActionReadInvoices) {
		return nil, false, false, nil
	}
	list, _, err := h.Invoices.List(r.Context(), q.caller, recon.InvoiceFilter{OrderID: o.ID, Location: h.Location, Page: 1, PerPage: maxShownInvoices})
	if err != nil {
		return nil, false, false, err
	}
	return h.invoiceRows(list), true, o.Status == recon.OrderCaptured && q.caller.May(recon.ActionIssueInvoices), nil
}

// confirmOrderInvoice serves GET /dashboard/order/invoice?invoice= (and a
// POST without the confirmation): the order and what will happen. An order
// that is not paid shows the order page with the reason (409).
func (h *Handler) confirmOrderInvoice(w http.ResponseWriter, r *http.Request, q *request) error {
	return h.confirmIssue(w, r, q, r.URL.Query().Get("invoice"))
}

func (h *Handler) confirmIssue(w http.ResponseWriter, r *http.Request, q *request, invoice string) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	o, err := h.Store.Order(r.Context(), q.caller.Tenant, invoice)
	if err != nil {
		return err
	}
	if o.Status != recon.OrderCaptured {
		return h.renderOrder(w, r, q, invoice, http.StatusConflict, q.lang.T("iv_not_paid"))
	}
	v := &confirmView{Title: "iv_issue_confirm", Intro: "iv_issue_help", Items: orderItems(q.lang, o),
		Action: "/dashboard/order/invoice", Fields: [][2]string{{"invoice", o.InvoiceNumber}}, Button: "iv_issue",
		Back: "/dashboard/order?" + url.Values{"invoice": {o.InvoiceNumber}}.Encode()}
	return h.renderConfirm(w, r, q, v)
}

// issueOrderInvoice serves POST /dashboard/order/invoice: once confirmed,
// invoices.Service.FromOrder issues the order's invoice and the browser goes
// to its page; a refusal (not paid, the seller's details incomplete, no
// provider for a live tenant) shows the order page with the reason in the
// page's language (422).
func (h *Handler) issueOrderInvoice(w http.ResponseWriter, r *http.Request, q *request) error {
	if h.Invoices == nil {
		return errNotFound()
	}
	invoice := r.PostForm.Get("invoice")
	if !confirmed(r) {
		return h.confirmIssue(w, r, q, invoice)
	}
	o, err := h.Store.Order(r.Context(), q.caller.Tenant, invoice)
	if err != nil {
		return err
	}
	inv, err := h.Invoices.FromOrder(r.Context(), q.caller, o, false)
	if code := recon.ErrorCode(err); code == recon.EUNPROCESSABLE || code == recon.EINVALID {
		msg := recon.ErrorMessage(err)
		switch recon.ErrorReason(err) {
		case recon.RuleNoInvoiceProvider:
			msg = q.lang.T("iv_no_provider")
		case recon.RuleSellerIncomplete:
			msg = q.lang.T("iv_incomplete_seller")
		case recon.RuleInvalidState:
			msg = q.lang.T("iv_not_paid")
		}
		return h.renderOrder(w, r, q, invoice, http.StatusUnprocessableEntity, q.lang.T("iv_refused")+": "+msg)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/dashboard/invoices/"+url.PathEscape(inv.ReferenceCode), http.StatusSeeOther)
	return nil
}
