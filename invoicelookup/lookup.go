// Package invoicelookup is the public invoice lookup page (docs/invoices.md,
// "PDF and the lookup page"): the buyer of an invoice types the lookup code
// printed on it and sees the invoice's summary with links to its PDF and
// its signed XML. No login: the code is the key. Codes are random (12
// letters of a 32-letter alphabet, 60 bits: recon.NewInvoiceLookupCode), the
// page is rate limited per address, and an unknown code, a malformed one and
// a draft's get the same 404, so the page tells nothing but "found" or
// "not found".
package invoicelookup

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"recon"
	"recon/invoicepdf"
	"recon/web"
)

// Store is what the page reads: an invoice by its lookup code (of any
// tenant), the original of a replacement or an adjustment (for its PDF's
// line naming it), and the signed XML.
type Store interface {
	InvoiceByLookup(ctx context.Context, lookup string) (*recon.Invoice, recon.TenantID, error)
	Invoice(ctx context.Context, tenant recon.TenantID, ref string) (*recon.Invoice, error)
	InvoiceXML(ctx context.Context, tenant recon.TenantID, ref string) ([]byte, error)
}

// Path is the lookup page's path; the PDF prints it after the base URL.
const Path = "/invoices/lookup"

// RateLimit and RateBurst are the page's limit per remote address (server
// routes): a request with a code a second after a burst of 30.
const (
	RateLimit = 1
	RateBurst = 30
)

// maxCode bounds what the page passes on as a code: longer is malformed.
const maxCode = 64

// Handler serves the lookup page, the PDF and the XML.
type Handler struct {
	Store Store
	// Limiter limits the page per remote address (every request with a
	// code, and the PDF and XML); nil does not limit.
	Limiter *web.RateLimiter
	// BaseURL is the server's external URL, which the PDF prints with Path
	// as where to look the invoice up.
	BaseURL  string
	Location *time.Location // the dates' time zone (Vietnam when nil)
	Logger   *slog.Logger
}

// Register adds the page's routes to mux.
func (h *Handler) Register(mux *web.Mux) {
	// A request refused before a handler (no route, another method, a
	// control character in the input) gets the page with the refusal.
	mux.Family("/invoices/", func(w http.ResponseWriter, r *http.Request, status int, _, message string) {
		d := &pageData{Lang: langOf(r), Error: "error", Detail: message}
		if status == http.StatusNotFound {
			d.Error, d.Detail = "not_found", ""
		}
		h.render(w, status, d)
	})
	mux.HandleFunc("GET "+Path, h.page)
	mux.HandleFunc("GET "+Path+"/{code}/pdf", h.pdf)
	mux.HandleFunc("GET "+Path+"/{code}/xml", h.xml)
}

//go:embed lookup.html
var pageFS embed.FS

var pageTmpl = template.Must(template.New("lookup.html").Funcs(template.FuncMap{"vnd": invoicepdf.VND}).ParseFS(pageFS, "lookup.html"))

// pageData is what the page shows.
type pageData struct {
	Lang     string
	T        map[string]string
	Code     string
	Error    string // a key of the messages: not_found, rate_limited, error
	Detail   string // what was refused, for a request refused before a handler
	Invoice  *recon.Invoice
	Symbol   string
	Date     string
	Status   string // the status in the page's language
	Relation string // the line naming the original, Vietnamese as printed
	PDFURL   string
	XMLURL   string // "" when the invoice has no signed XML yet
	Test     bool   // an invoice of a company's test mode
	Other    string // the other language's code
	OtherURL string
}

// page serves GET /invoices/lookup (the form) and GET
// /invoices/lookup?code=CODE (the invoice's summary, or the form with "not
// found").
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	l := langOf(r)
	raw, asked := r.URL.Query()["code"]
	d := &pageData{Lang: l}
	if !asked {
		h.render(w, http.StatusOK, d)
		return
	}
	code := strings.TrimSpace(raw[0])
	d.Code = code
	if !h.allow(w, r) {
		d.Error = "rate_limited"
		h.render(w, http.StatusTooManyRequests, d)
		return
	}
	inv, tenant, err := h.find(r.Context(), code)
	if err != nil {
		h.fail(w, r, d, err)
		return
	}
	d.Invoice, d.Symbol, d.Test = inv, invoicepdf.Symbol(inv), !tenant.Live()
	d.Date = inv.IssuedDate.In(h.location()).Format("02/01/2006")
	d.Status = messages[l]["status_"+inv.Status]
	var orig *recon.Invoice
	if inv.OriginalReferenceCode != "" {
		orig, _ = h.Store.Invoice(r.Context(), tenant, inv.OriginalReferenceCode)
	}
	d.Relation = relation(l, inv, orig, h.location())
	esc := url.PathEscape(inv.LookupCode)
	d.PDFURL = Path + "/" + esc + "/pdf"
	if x, err := h.Store.InvoiceXML(r.Context(), tenant, inv.ReferenceCode); err == nil && len(x) > 0 {
		d.XMLURL = Path + "/" + esc + "/xml"
	}
	h.render(w, http.StatusOK, d)
}

// pdf serves GET /invoices/lookup/{code}/pdf: the invoice's PDF.
func (h *Handler) pdf(w http.ResponseWriter, r *http.Request) {
	d := &pageData{Lang: langOf(r)}
	if !h.allow(w, r) {
		d.Error = "rate_limited"
		h.render(w, http.StatusTooManyRequests, d)
		return
	}
	inv, tenant, err := h.find(r.Context(), r.PathValue("code"))
	if err != nil {
		h.fail(w, r, d, err)
		return
	}
	var orig *recon.Invoice
	if inv.OriginalReferenceCode != "" {
		if orig, err = h.Store.Invoice(r.Context(), tenant, inv.OriginalReferenceCode); err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
			h.fail(w, r, d, err)
			return
		}
	}
	pdf, err := invoicepdf.Render(inv, invoicepdf.Options{LookupURL: strings.TrimRight(h.BaseURL, "/") + Path, Original: orig, Location: h.Location,
		Test: !tenant.Live()})
	if err != nil {
		h.fail(w, r, d, err)
		return
	}
	documentHeaders(w, "application/pdf", "inline", fileName(inv)+".pdf")
	_, _ = w.Write(pdf)
}

// xml serves GET /invoices/lookup/{code}/xml: the invoice's signed XML, as
// sent to the tax authority; 404 while it has none.
func (h *Handler) xml(w http.ResponseWriter, r *http.Request) {
	d := &pageData{Lang: langOf(r)}
	if !h.allow(w, r) {
		d.Error = "rate_limited"
		h.render(w, http.StatusTooManyRequests, d)
		return
	}
	inv, tenant, err := h.find(r.Context(), r.PathValue("code"))
	if err != nil {
		h.fail(w, r, d, err)
		return
	}
	x, err := h.Store.InvoiceXML(r.Context(), tenant, inv.ReferenceCode)
	if err == nil && len(x) == 0 {
		err = notFound()
	}
	if err != nil {
		h.fail(w, r, d, err)
		return
	}
	documentHeaders(w, "application/xml; charset=utf-8", "attachment", fileName(inv)+".xml")
	_, _ = w.Write(x)
}

// relation is the line naming the invoice a replacement or an adjustment
// corrects, in the page's language ("" for an invoice that corrects none).
func relation(l string, inv, orig *recon.Invoice, loc *time.Location) string {
	if l != "en" || (inv.Relation == 0 && inv.OriginalReferenceCode == "") {
		return invoicepdf.Relation(inv, orig, loc)
	}
	ref := "reference " + inv.OriginalReferenceCode
	if orig != nil && orig.Number > 0 {
		ref = fmt.Sprintf("%s no. %d of %s", invoicepdf.Symbol(orig), orig.Number, orig.IssuedDate.In(loc).Format("02/01/2006"))
	}
	if inv.Relation == recon.InvoiceRelAdjust {
		kind := map[string]string{recon.AdjustIncrease: "increases", recon.AdjustDecrease: "decreases", recon.AdjustInfo: "corrects the information of"}[inv.AdjustmentType]
		if kind == "" {
			kind = "adjusts"
		}
		return "This invoice " + kind + " invoice " + ref
	}
	return "This invoice replaces invoice " + ref
}

func notFound() error { return recon.Errorf(recon.ENOTFOUND, "no invoice has this lookup code") }

// find returns the invoice with the lookup code. A malformed code, an
// unknown one and a draft's (not an invoice yet: no number, may change) are
// the same not found.
func (h *Handler) find(ctx context.Context, code string) (*recon.Invoice, recon.TenantID, error) {
	code = strings.TrimSpace(code)
	if code == "" || len(code) > maxCode || strings.ContainsFunc(code, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-')
	}) {
		return nil, recon.TenantID{}, notFound()
	}
	inv, tenant, err := h.Store.InvoiceByLookup(ctx, code)
	if recon.ErrorCode(err) == recon.ENOTFOUND || (err == nil && (inv.Status == recon.InvoiceDraft || inv.LookupCode == "")) {
		return nil, recon.TenantID{}, notFound()
	}
	if err != nil {
		return nil, recon.TenantID{}, err
	}
	return inv, tenant, nil
}

// fail answers an error: the page with "not found" (404) or "something went
// wrong" (500, logged).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, d *pageData, err error) {
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		d.Error = "not_found"
		h.render(w, http.StatusNotFound, d)
		return
	}
	if h.Logger != nil {
		h.Logger.ErrorContext(r.Context(), "invoice lookup", "error", err)
	}
	d.Error = "error"
	h.render(w, http.StatusInternalServerError, d)
}

// allow takes a request from the remote address's bucket.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request) bool {
	return h.Limiter.Allow(w.Header(), "invoice-lookup:"+clientIP(r))
}

func (h *Handler) location() *time.Location {
	if h.Location != nil {
		return h.Location
	}
	return invoicepdf.Vietnam
}

func (h *Handler) render(w http.ResponseWriter, status int, d *pageData) {
	d.T = messages[d.Lang]
	d.Other = "en"
	if d.Lang == "en" {
		d.Other = "vi"
	}
	q := url.Values{"lang": {d.Other}}
	if d.Code != "" {
		q.Set("code", d.Code)
	}
	d.OtherURL = Path + "?" + q.Encode()
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		if h.Logger != nil {
			h.Logger.Error("invoice lookup page", "error", err)
		}
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func documentHeaders(w http.ResponseWriter, contentType, disposition, name string) {
	hd := w.Header()
	hd.Set("Content-Type", contentType)
	hd.Set("Content-Disposition", fmt.Sprintf("%s; filename=%q", disposition, name))
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
}

// fileName is the download's name: the symbol and the number, e.g.
// "1C26TAA-123".
func fileName(inv *recon.Invoice) string {
	return invoicepdf.Symbol(inv) + "-" + fmt.Sprint(inv.Number)
}

// clientIP is the address the request came from. Forwarding headers are not
// trusted (as the gateway's checkout): a proxy in front should set
// RemoteAddr.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
