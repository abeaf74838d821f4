package apiv2

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"recon"
	"recon/invoicepdf"
	"recon/invoices"
)

// E-invoices (docs/invoices.md, API): in the shape of SePay's eInvoice API,
// under /v1/invoices and /v1/provider-accounts but served by API v2 (the
// bearer tokens, the envelope, idempotency), all through invoices.Service.
// The server computes every amount: a body carrying amount or vat_amount is
// a 400 (unknown field), as is any other unknown field or wrong type.

func (h *Handler) invoiceRoutes(r *routes) {
	r.add("POST /v1/invoices/create", h.createInvoice, recon.ScopeInvoiceWrite, recon.ActionIssueInvoices, KeyOptional)
	r.add("GET /v1/invoices/create/check/{tracking_code}", h.checkInvoice, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
	r.add("POST /v1/invoices/issue", h.issueInvoice, recon.ScopeInvoiceWrite, recon.ActionIssueInvoices, KeyOptional)
	r.add("POST /v1/invoices/replace", h.replaceInvoice, recon.ScopeInvoiceWrite, recon.ActionIssueInvoices, KeyOptional)
	r.add("POST /v1/invoices/adjust", h.adjustInvoice, recon.ScopeInvoiceWrite, recon.ActionIssueInvoices, KeyOptional)
	r.add("POST /v1/invoices/cancel", h.cancelInvoice, recon.ScopeInvoiceWrite, recon.ActionIssueInvoices, KeyOptional)
	r.add("GET /v1/invoices", h.listInvoices, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
	r.add("GET /v1/invoices/{reference_code}", h.showInvoice, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
	r.add("GET /v1/invoices/{reference_code}/xml", h.invoiceXML, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
	r.add("GET /v1/invoices/{reference_code}/pdf", h.invoicePDF, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
	r.add("GET /v1/provider-accounts", h.providerAccounts, recon.ScopeInvoiceRead, recon.ActionReadInvoices, NoKey)
}

// invoiceFamilies are the path prefixes of the invoice routes: their
// failures before a handler (no route, wrong method) answer in the v2
// envelope, not the gateway's /v1 shape.
var invoiceFamilies = []string{"/v1/invoices", "/v1/provider-accounts"}

// invoicesService is the configured service, or one over the store with
// no provider and no signer (drafts only).
func (h *Handler) invoicesService() (*invoices.Service, error) {
	if h.cfg.Invoices != nil {
		return h.cfg.Invoices, nil
	}
	st, ok := h.cfg.Store.(invoices.Store)
	if !ok {
		return nil, recon.Errorf(recon.EUNAVAILABLE, "this server does not serve invoices")
	}
	return &invoices.Service{Store: st, Clock: h.cfg.Clock, Location: h.cfg.Location}, nil
}

// flexText is a JSON string or number kept as its text: a quantity ("2.5"
// or 2.5) or a VAT rate ("10", 10, "KCT").
type flexText string

func (f *flexText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexText(strings.TrimSpace(s))
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil || n == "" {
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[string]()}
	}
	*f = flexText(n.String())
	return nil
}

// invoiceItemBody is one line as a merchant gives it: no amounts.
type invoiceItemBody struct {
	LineNumber     *int     `json:"line_number"`
	LineType       int      `json:"line_type"`
	ItemCode       string   `json:"item_code"`
	ItemName       string   `json:"item_name"`
	Unit           string   `json:"unit"`
	Quantity       flexText `json:"quantity"`
	UnitPrice      int64    `json:"unit_price"`
	DiscountAmount int64    `json:"discount_amount"`
	VATRate        flexText `json:"vat_rate"`
}

// invoiceBody is the content of POST /v1/invoices/create, replace and
// adjust.
type invoiceBody struct {
	IsDraft         bool              `json:"is_draft"`
	OriginalRef     string            `json:"original_invoice_reference_code"`
	AdjustmentType  string            `json:"adjustment_type"`
	TemplateCode    string            `json:"template_code"`
	Series          string            `json:"invoice_series"`
	Currency        string            `json:"currency"`
	ExchangeRate    flexText          `json:"exchange_rate"`
	PaymentMethod   string            `json:"payment_method"`
	Buyer           *recon.Buyer      `json:"buyer"`
	Items           []invoiceItemBody `json:"items"`
	OrderID         string            `json:"order_id"`
	OrderInvoiceNum string            `json:"order_invoice_number"`
}

// InvoiceStore is what the invoice routes need of storage beside the
// service's: an order by its v2 id, its invoice number or its internal id.
type InvoiceStore interface {
	OrderByPublicID(ctx context.Context, tenant recon.TenantID, id string) (*recon.Order, error)
	Order(ctx context.Context, tenant recon.TenantID, invoiceNumber string) (*recon.Order, error)
	OrderByID(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Order, error)
}

// InvoiceInput is an invoice body read by ReadInvoiceRequest: the
// service's request and, for replace and adjust, the original's reference
// code.
type InvoiceInput struct {
	Original string
	Request  invoices.Request
}

// ReadInvoiceRequest reads an invoice's JSON body (POST
// /v1/invoices/create, replace or adjust) strictly, as the API does, for
// the tenant (its order looked up in st): the CLI reads its files with it.
func ReadInvoiceRequest(ctx context.Context, st InvoiceStore, tenant recon.TenantID, body io.Reader) (InvoiceInput, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", body)
	if err != nil {
		return InvoiceInput{}, err
	}
	var b invoiceBody
	if err := decode(r, &b); err != nil {
		return InvoiceInput{}, err
	}
	req, err := invoiceRequest(ctx, st, tenant, &b)
	return InvoiceInput{Original: strings.TrimSpace(b.OriginalRef), Request: req}, err
}

// invoiceRequest turns the body into the service's request, the order
// looked up in the tenant.
func invoiceRequest(ctx context.Context, st InvoiceStore, tenant recon.TenantID, b *invoiceBody) (invoices.Request, error) {
	req := invoices.Request{TemplateCode: b.TemplateCode, Series: b.Series, Currency: b.Currency, ExchangeRate: string(b.ExchangeRate),
		PaymentMethod: b.PaymentMethod, IsDraft: b.IsDraft, AdjustmentType: b.AdjustmentType}
	if b.Buyer != nil {
		req.Buyer = *b.Buyer
	}
	if len(b.Items) == 0 {
		return req, recon.FieldError("items", "items is required: an invoice needs at least one line")
	}
	for i, it := range b.Items {
		n := i + 1
		if it.LineNumber != nil {
			n = *it.LineNumber
		}
		typ := it.LineType
		if typ == 0 {
			typ = recon.LineGoods
		}
		req.Items = append(req.Items, recon.InvoiceItem{LineNumber: n, LineType: typ, ItemCode: it.ItemCode, ItemName: it.ItemName,
			Unit: it.Unit, Quantity: string(it.Quantity), UnitPrice: it.UnitPrice, DiscountAmount: it.DiscountAmount, VATRate: string(it.VATRate)})
	}
	if b.OrderID != "" && b.OrderInvoiceNum != "" {
		return req, recon.FieldError("order_id", "give order_id or order_invoice_number, not both")
	}
	var (
		o   *recon.Order
		err error
	)
	switch {
	case b.OrderID != "":
		if !recon.ValidXID(b.OrderID) {
			return req, recon.FieldError("order_id", "order_id must be an order's id (a UUID)")
		}
		o, err = st.OrderByPublicID(ctx, tenant, b.OrderID)
	case b.OrderInvoiceNum != "":
		o, err = st.Order(ctx, tenant, b.OrderInvoiceNum)
	}
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return req, recon.FieldError("order_id", "the order is not one of this company's (in this mode)")
	}
	if err != nil {
		return req, err
	}
	if o != nil {
		req.OrderID = o.ID
	}
	return req, nil
}

func (h *Handler) createInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	var b invoiceBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	if b.OriginalRef != "" {
		return nil, recon.FieldError("original_invoice_reference_code", "original_invoice_reference_code is for replace and adjust")
	}
	return h.makeInvoice(r, c, &b, func(svc *invoices.Service, req invoices.Request) (*recon.Invoice, error) {
		return svc.Create(r.Context(), c, req)
	})
}

func (h *Handler) replaceInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.correctInvoice(r, c, (*invoices.Service).Replace)
}

func (h *Handler) adjustInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.correctInvoice(r, c, (*invoices.Service).Adjust)
}

type correctFunc func(*invoices.Service, context.Context, *recon.Caller, string, invoices.Request) (*recon.Invoice, error)

func (h *Handler) correctInvoice(r *http.Request, c *recon.Caller, fn correctFunc) (*Answer, error) {
	var b invoiceBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	if strings.TrimSpace(b.OriginalRef) == "" {
		return nil, recon.FieldError("original_invoice_reference_code", "original_invoice_reference_code is required: the issued invoice this one corrects")
	}
	return h.makeInvoice(r, c, &b, func(svc *invoices.Service, req invoices.Request) (*recon.Invoice, error) {
		return fn(svc, r.Context(), c, strings.TrimSpace(b.OriginalRef), req)
	})
}

func (h *Handler) makeInvoice(r *http.Request, c *recon.Caller, b *invoiceBody, fn func(*invoices.Service, invoices.Request) (*recon.Invoice, error)) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	req, err := invoiceRequest(r.Context(), h.cfg.Store, c.Tenant, b)
	if err != nil {
		return nil, err
	}
	inv, err := fn(svc, req)
	if err != nil {
		return nil, err
	}
	return created(h.invoiceJSON(r, c, inv)), nil
}

// refBody is the body of POST /v1/invoices/issue and cancel.
type refBody struct {
	ReferenceCode string `json:"reference_code"`
	Reason        string `json:"reason"`
}

func readRef(r *http.Request, withReason bool) (refBody, error) {
	var b refBody
	if err := decode(r, &b); err != nil {
		return b, err
	}
	b.ReferenceCode = strings.TrimSpace(b.ReferenceCode)
	if b.ReferenceCode == "" {
		return b, recon.FieldError("reference_code", "reference_code is required")
	}
	if !withReason && b.Reason != "" {
		return b, recon.FieldError("reason", "reason is for cancel")
	}
	return b, nil
}

func (h *Handler) issueInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	b, err := readRef(r, false)
	if err != nil {
		return nil, err
	}
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	inv, err := svc.Issue(r.Context(), c, b.ReferenceCode)
	if err != nil {
		return nil, err
	}
	return ok(h.invoiceJSON(r, c, inv)), nil
}

func (h *Handler) cancelInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	b, err := readRef(r, true)
	if err != nil {
		return nil, err
	}
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	inv, err := svc.Cancel(r.Context(), c, b.ReferenceCode, b.Reason)
	if err != nil {
		return nil, err
	}
	return ok(h.invoiceJSON(r, c, inv)), nil
}

func (h *Handler) checkInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	status, inv, err := svc.Check(r.Context(), c, r.PathValue("tracking_code"))
	if err != nil {
		return nil, err
	}
	return ok(map[string]any{"tracking_code": inv.TrackingCode, "status": status, "invoice": h.invoiceJSON(r, c, inv)}), nil
}

func (h *Handler) showInvoice(r *http.Request, c *recon.Caller) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	inv, err := svc.Get(r.Context(), c, r.PathValue("reference_code"))
	if err != nil {
		return nil, err
	}
	return ok(h.invoiceJSON(r, c, inv)), nil
}

// invoiceParams are GET /v1/invoices' query parameters.
var invoiceParams = []string{"status", "order_id", "from_date", "to_date", "page", "per_page"}

func (h *Handler) listInvoices(r *http.Request, c *recon.Caller) (*Answer, error) {
	q := r.URL.Query()
	if err := recon.CheckParams(q, invoiceParams); err != nil {
		return nil, err
	}
	p, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	f := recon.InvoiceFilter{Page: p.Page, PerPage: p.PerPage, Status: q.Get("status"), Location: h.cfg.Location}
	if err := recon.ParseDateRange(q, &f.From, &f.To); err != nil {
		return nil, err
	}
	if q.Has("status") && !slices.Contains(recon.InvoiceStatuses, f.Status) {
		return nil, recon.FieldError("status", "status must be one of %s", strings.Join(recon.InvoiceStatuses, ", "))
	}
	if q.Has("order_id") {
		id := q.Get("order_id")
		if !recon.ValidXID(id) {
			return nil, recon.FieldError("order_id", "order_id must be an order's id (a UUID)")
		}
		o, err := h.cfg.Store.OrderByPublicID(r.Context(), c.Tenant, id)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return paged([]any{}, p, 0), nil
		}
		if err != nil {
			return nil, err
		}
		f.OrderID = o.ID
	}
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	list, total, err := svc.List(recon.Listing(r.Context()), c, f)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, inv := range list {
		out[i] = h.invoiceJSON(r, c, inv)
	}
	return paged(out, p, total), nil
}

func (h *Handler) invoiceXML(r *http.Request, c *recon.Caller) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	ref := r.PathValue("reference_code")
	xml, err := svc.XML(r.Context(), c, ref)
	if err != nil {
		return nil, err
	}
	return &Answer{Raw: xml, ContentType: "application/xml; charset=utf-8", Filename: ref + ".xml"}, nil
}

func (h *Handler) invoicePDF(r *http.Request, c *recon.Caller) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	inv, err := svc.Get(r.Context(), c, r.PathValue("reference_code"))
	if err != nil {
		return nil, err
	}
	var orig *recon.Invoice
	if inv.OriginalReferenceCode != "" {
		if orig, err = svc.Get(r.Context(), c, inv.OriginalReferenceCode); err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
			return nil, err
		}
	}
	pdf, err := invoicepdf.Render(inv, invoicepdf.Options{LookupURL: h.cfg.InvoiceLookupURL, Original: orig, Test: !c.Tenant.Live()})
	if err != nil {
		return nil, err
	}
	return &Answer{Raw: pdf, ContentType: "application/pdf", Filename: inv.ReferenceCode + ".pdf"}, nil
}

// providerAccounts lists the providers the caller's tenant sends invoices
// through: the sandbox for a test tenant (and a live one on a --sandbox
// server), none for a live one until a provider is configured.
func (h *Handler) providerAccounts(r *http.Request, c *recon.Caller) (*Answer, error) {
	svc, err := h.invoicesService()
	if err != nil {
		return nil, err
	}
	p := svc.Test
	if c.Tenant.Live() {
		p = svc.Live
	}
	out := []map[string]any{}
	if p != nil {
		out = append(out, map[string]any{"id": p.Name(), "provider": p.Name(), "sandbox": p.Name() == invoices.SandboxProvider,
			"active": svc.Signer != nil})
	}
	return &Answer{Status: http.StatusOK, Data: out, Meta: map[string]any{"can_send": p != nil && svc.Signer != nil}}, nil
}

func (h *Handler) invoiceJSON(r *http.Request, c *recon.Caller, inv *recon.Invoice) map[string]any {
	return InvoiceJSON(r.Context(), h.cfg.Store, c.Tenant, inv, h.cfg.Location)
}

// InvoiceJSON is an invoice as the API shows it (docs/invoices.md, API):
// recon.Invoice's JSON with the order's v2 id (looked up in st), the
// issued date as a day, a draft's number null, and the times in loc.
func InvoiceJSON(ctx context.Context, st InvoiceStore, tenant recon.TenantID, inv *recon.Invoice, loc *time.Location) map[string]any {
	b, err := json.Marshal(inv)
	m := map[string]any{}
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		_ = d.Decode(&m)
	}
	delete(m, "CreatedAt")
	delete(m, "UpdatedAt")
	m["created_at"], m["updated_at"] = optTimeIn(inv.CreatedAt, loc), optTimeIn(inv.UpdatedAt, loc)
	m["order_id"] = nil
	if inv.OrderID != 0 {
		if o, err := st.OrderByID(ctx, tenant, inv.OrderID); err == nil && o.PublicID != "" {
			m["order_id"] = o.PublicID
		}
	}
	if inv.IssuedDate.IsZero() {
		m["issued_date"] = nil
	} else {
		m["issued_date"] = inv.IssuedDate.Format("2006-01-02")
	}
	if inv.Number == 0 {
		m["invoice_number"] = nil
	}
	return m
}
