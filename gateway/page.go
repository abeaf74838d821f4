package gateway

import (
	"bytes"
	"crypto/hmac"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strconv"

	"rsc.io/qr"

	"recon"
)

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"vnd": formatVND}).ParseFS(templateFS, "templates/*.html"))

// pageData is what the hosted checkout page shows.
type pageData struct {
	Company    string
	Order      *recon.Order
	Bank       *recon.BankAccount
	Remaining  int64
	QRURL      string // "" when the bank has no known BIN or the details do not fit a VietQR
	Awaiting   bool
	Paid       bool
	Cancelled  bool
	SuccessURL string
	CancelURL  string
	Sandbox    bool
}

// viewOrder loads the order of a hosted checkout request after checking the
// page token. Every failure is the same 404: the page must not tell whether
// a merchant or an invoice number exists.
func (h *Handler) viewOrder(r *http.Request) (*recon.Merchant, *recon.Order, error) {
	notFound := recon.Errorf(recon.ENOTFOUND, "no such checkout page: the link is wrong or has expired")
	ctx := r.Context()
	m, err := h.Store.MerchantByID(ctx, r.PathValue("merchant"))
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	invoice := r.PathValue("invoice")
	if !hmac.Equal([]byte(r.URL.Query().Get("t")), []byte(checkoutToken(m, invoice))) {
		return nil, nil, notFound
	}
	o, err := h.Store.Order(ctx, m.Tenant, invoice)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return nil, nil, notFound
	}
	if err != nil {
		return nil, nil, err
	}
	return m, o, nil
}

// checkoutPage serves GET /v1/checkout/{merchant}/{invoice}?t=TOKEN: the
// hosted checkout page (amount, bank account, memo code, VietQR, status),
// refreshed every 5 seconds while the payment is awaited.
func (h *Handler) checkoutPage(w http.ResponseWriter, r *http.Request) error {
	m, o, err := h.viewOrder(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	bank, err := h.Store.BankAccount(ctx, m.Tenant, o.BankAccountID)
	if err != nil {
		return err
	}
	company, err := h.Store.Company(ctx, m.Tenant.ID()) // the twin's id reads the live company's record
	if err != nil {
		return err
	}
	d := pageData{
		Company: company.FullName, Order: o, Bank: bank, Remaining: max(o.Amount-o.PaidAmount, 0),
		Awaiting: o.Status == recon.OrderAwaitingPayment, Paid: o.Status == recon.OrderCaptured,
		Cancelled: o.Status == recon.OrderCancelled, SuccessURL: o.SuccessURL, CancelURL: o.CancelURL,
		Sandbox: h.Sandbox || !m.Tenant.Live(),
	}
	if _, ok := orderQR(o, bank); ok && d.Awaiting {
		d.QRURL = r.URL.EscapedPath() + "/qr.png?t=" + url.QueryEscape(r.URL.Query().Get("t"))
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "checkout.html", d); err != nil {
		return err
	}
	pageHeaders(w)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// checkoutQR serves GET /v1/checkout/{merchant}/{invoice}/qr.png?t=TOKEN:
// the VietQR of the amount still due, as a PNG.
func (h *Handler) checkoutQR(w http.ResponseWriter, r *http.Request) error {
	m, o, err := h.viewOrder(r)
	if err != nil {
		return err
	}
	bank, err := h.Store.BankAccount(r.Context(), m.Tenant, o.BankAccountID)
	if err != nil {
		return err
	}
	payload, ok := orderQR(o, bank)
	if !ok || o.Status != recon.OrderAwaitingPayment {
		return recon.Errorf(recon.ENOTFOUND, "this order has no VietQR: pay by transfer with the details shown")
	}
	code, err := qr.Encode(payload, qr.M)
	if err != nil {
		return err
	}
	code.Scale = 6
	png := code.PNG()
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(png)
	return nil
}

// orderQR is the VietQR payload asking for what is still due on o, and
// whether there is one (a known bank, details that fit).
func orderQR(o *recon.Order, bank *recon.BankAccount) (string, bool) {
	bin := recon.BankBIN(bank.BankName)
	if bin == "" {
		return "", false
	}
	p, err := recon.VietQR{BIN: bin, Account: bank.AccountNumber, Amount: max(o.Amount-o.PaidAmount, 0), Purpose: o.PaymentCode}.Payload()
	return p, err == nil
}

// pageHeaders are the headers of the HTML pages: no caching (the status
// changes), no framing, no scripts, and no Referer to the merchant's
// return URLs (the page URL carries its token).
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

// renderError writes an error as an HTML page.
func (h *Handler) renderError(w http.ResponseWriter, status int, d errorDetail) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "error.html", struct {
		Status        int
		Code, Message string
	}{status, d.Code, d.Message}); err != nil {
		h.logger().Error("render error page", "err", err)
		http.Error(w, d.Message, status)
		return
	}
	pageHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// formatVND renders an amount the Vietnamese way: 150.000 ₫.
func formatVND(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, '.')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b) + " ₫"
	}
	return string(b) + " ₫"
}
