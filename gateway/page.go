package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"rsc.io/qr"

	"recon"
)

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"vnd":       formatVND,
	"digits":    func(n int64) string { return strconv.FormatInt(n, 10) },
	"countdown": countdownText,
	"copyArgs": func(value, id, label string) copyButton {
		return copyButton{Value: value, ID: id, Label: label}
	},
}).ParseFS(templateFS, "templates/*.html"))

// copyButton is a tap-to-copy button (templates/style.html, "copy").
type copyButton struct{ Value, ID, Label string }

// countdownText renders seconds left as the page's script does: H:MM:SS
// with two-digit hours, after "N days" when a day or more is left.
func countdownText(seconds int64, days string) string {
	two := func(n int64) string {
		if n < 10 {
			return "0" + strconv.FormatInt(n, 10)
		}
		return strconv.FormatInt(n, 10)
	}
	s := two(seconds%86400/3600) + ":" + two(seconds%3600/60) + ":" + two(seconds%60)
	if d := seconds / 86400; d > 0 {
		return strconv.FormatInt(d, 10) + " " + days + " " + s
	}
	return s
}

// pageData is what the hosted checkout page shows.
type pageData struct {
	pageChrome
	Company   string
	LogoURL   string // the merchant's logo (https), "" for none
	Order     *recon.Order
	Bank      *recon.BankAccount
	Remaining int64
	QRURL     string // "" when the bank has no known BIN or the details do not fit a VietQR
	// QRFile is the file name "save QR" gives the PNG.
	QRFile string
	// VA is the order's virtual account the page asks the payer to use
	// (API v2: its first active one), nil when none: then the bank account
	// and the payment code as the memo.
	VA *recon.VirtualAccount
	// Memo is what the payer writes in the transfer's memo: the payment
	// code, a memo account's code, "" for a bank account (none needed).
	Memo string
	// Account is the account number the payer sends to (the bank VA's or
	// the bank account's).
	Account    string
	Awaiting   bool
	Paid       bool
	Cancelled  bool
	Expired    bool
	SuccessURL string
	CancelURL  string
	Sandbox    bool
	// ExpiresIn is how many seconds are left to pay (0: no expiry shown),
	// counted down by the page's script; Deadline is that moment in the
	// business time zone.
	ExpiresIn int64
	Deadline  string
	// Apps are links that open banking apps with the transfer filled in.
	Apps []bankApp
	// PollMS is how often the script asks for the status, in milliseconds.
	PollMS int64
}

// pageChrome is what every payer's page carries: its language, the words
// in it, the switch to the other language and the script nonce.
type pageChrome struct {
	Lang, OtherLang, OtherURL string
	T                         map[string]string
	Nonce                     string
}

func newChrome(w http.ResponseWriter, r *http.Request) pageChrome {
	lang := pageLang(w, r)
	other, otherURL := otherLang(r, lang)
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	return pageChrome{Lang: lang, OtherLang: other, OtherURL: otherURL, T: pageText[lang], Nonce: base64.RawStdEncoding.EncodeToString(nonce)}
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
// hosted checkout page (the merchant's name and logo, amount, bank account,
// memo code, VietQR, banking-app links, expiry countdown, status) in one
// language with a switch (docs/api.md, "The checkout page"). While the
// payment is awaited its script asks for the page again every 5 seconds
// (Handler.PagePoll) and reloads when the status changed (without scripts:
// a refresh every 5 seconds).
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
	brand, err := h.Store.HubBranding(ctx, m.Tenant)
	if err != nil {
		return err
	}
	va, err := h.activeVA(r, m, o)
	if err != nil {
		return err
	}
	now := h.now()
	_, expired := recon.ExpireOrder(o, now)
	expired = expired || o.Status == recon.OrderCancelled && !o.ExpiredAt.IsZero()
	d := pageData{
		pageChrome: newChrome(w, r),
		Company:    company.FullName, LogoURL: brand.LogoURL, Order: o, Bank: bank, Remaining: max(o.Amount-o.PaidAmount, 0), VA: va,
		Memo: o.PaymentCode, Account: bank.AccountNumber, Expired: expired,
		Awaiting: o.Status == recon.OrderAwaitingPayment && !expired, Paid: o.Status == recon.OrderCaptured,
		Cancelled: o.Status == recon.OrderCancelled && !expired, SuccessURL: o.SuccessURL, CancelURL: o.CancelURL,
		Sandbox: h.Sandbox || !m.Tenant.Live(), PollMS: 5000,
	}
	if h.PagePoll > 0 {
		d.PollMS = h.PagePoll.Milliseconds()
	}
	if brand.DisplayName != "" {
		d.Company = brand.DisplayName
	}
	if va != nil {
		d.Memo = va.Number
		if va.Kind == recon.VAKindBank {
			d.Memo, d.Account = "", va.Number
		}
		if va.AmountMode != recon.VAOpen {
			d.Remaining = va.AskedAmount(o)
		}
	}
	if d.Awaiting && o.PaidAmount == 0 && !o.ExpiresAt.IsZero() {
		// A partially paid order does not expire (recon.ExpireOrder).
		d.ExpiresIn = int64((o.ExpiresAt.Sub(now) + time.Second - 1) / time.Second)
		d.Deadline = o.ExpiresAt.In(h.location()).Format("15:04 02/01/2006")
	}
	if _, ok := orderQR(o, bank, va); ok && d.Awaiting {
		d.QRURL = r.URL.EscapedPath() + "/qr.png?t=" + url.QueryEscape(r.URL.Query().Get("t"))
		d.QRFile = qrFileName(o)
		d.Apps = bankApps(bank, d.Account, d.Remaining, d.Memo)
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "checkout.html", d); err != nil {
		return err
	}
	pageHeaders(w, d.Nonce)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// qrFileName is the name "save QR" gives the order's VietQR: VietQR-,
// the invoice number in letters, digits, dashes and underscores, .png.
func qrFileName(o *recon.Order) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, o.InvoiceNumber)
	return "VietQR-" + name + ".png"
}

// bankApp is a link that opens a banking app with a transfer filled in.
type bankApp struct {
	Name string
	URL  string
}

// deepLinkApps are the banking apps VietQR.io's deep links
// (https://dl.vietqr.io/pay) open with the account, amount and memo filled
// in, as its changelog lists them (docs/api.md, "The checkout page"): the
// app id and the name the payer knows. Other apps open without the
// details, so the page does not offer them.
var deepLinkApps = []struct{ ID, Name string }{
	{"mb", "MBBank"},
	{"icb", "VietinBank iPay"},
	{"bidv", "BIDV SmartBanking"},
	{"acb", "ACB ONE"},
	{"ocb", "OCB OMNI"},
}

// vietQRBankCodes are VietQR's short codes of the banks recon.BankBIN
// knows, by NAPAS BIN: the "@bank" of a deep link's beneficiary.
var vietQRBankCodes = map[string]string{
	"970436": "vcb", "970422": "mb", "970407": "tcb", "970415": "icb", "970418": "bidv",
	"970416": "acb", "970432": "vpb", "970423": "tpb", "970403": "stb",
}

// bankApps are the deep links of the transfer: to account at bank, amount
// VND, the memo ("" for none). None when the bank has no VietQR code.
func bankApps(bank *recon.BankAccount, account string, amount int64, memo string) []bankApp {
	code := vietQRBankCodes[recon.BankBIN(bank.BankName)]
	if code == "" || account == "" {
		return nil
	}
	out := make([]bankApp, 0, len(deepLinkApps))
	for _, a := range deepLinkApps {
		// The beneficiary keeps its "@" (VietQR.io's rule); the rest is
		// query-escaped.
		u := "https://dl.vietqr.io/pay?app=" + a.ID + "&ba=" + url.QueryEscape(account) + "@" + code
		if amount > 0 {
			u += "&am=" + strconv.FormatInt(amount, 10)
		}
		if memo != "" {
			u += "&tn=" + url.QueryEscape(memo)
		}
		out = append(out, bankApp{Name: a.Name, URL: u})
	}
	return out
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
	va, err := h.activeVA(r, m, o)
	if err != nil {
		return err
	}
	payload, ok := orderQR(o, bank, va)
	if _, expired := recon.ExpireOrder(o, h.now()); !ok || o.Status != recon.OrderAwaitingPayment || expired {
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
	if r.URL.Query().Get("download") == "1" { // "save QR"
		w.Header().Set("Content-Disposition", `attachment; filename="`+qrFileName(o)+`"`)
	}
	_, _ = w.Write(png)
	return nil
}

// activeVA returns the order's first active virtual account (API v2), or
// nil when it has none.
func (h *Handler) activeVA(r *http.Request, m *recon.Merchant, o *recon.Order) (*recon.VirtualAccount, error) {
	vas, err := h.Store.OrderVAs(r.Context(), m.Tenant, []int64{o.ID})
	if err != nil {
		return nil, err
	}
	for _, va := range vas[o.ID] {
		if va.ActiveAt(h.now()) {
			return va, nil
		}
	}
	return nil, nil
}

// orderQR is the VietQR payload asking for what is still due on o (through
// its virtual account va when not nil: recon.VAQRText), and whether there
// is one (a known bank, details that fit).
func orderQR(o *recon.Order, bank *recon.BankAccount, va *recon.VirtualAccount) (string, bool) {
	if va != nil {
		p := recon.VAQRText(va, bank, o)
		return p, p != ""
	}
	bin := recon.BankBIN(bank.BankName)
	if bin == "" {
		return "", false
	}
	p, err := recon.VietQR{BIN: bin, Account: bank.AccountNumber, Amount: max(o.Amount-o.PaidAmount, 0), Purpose: o.PaymentCode}.Payload()
	return p, err == nil
}

// pageHeaders are the headers of the HTML pages: no caching (the status
// changes), no framing, scripts by nonce only (fetching the page itself),
// images from itself and the merchant's https logo, and no Referer to the
// merchant's return URLs or the banking-app links (the page URL carries
// its token).
func pageHeaders(w http.ResponseWriter, nonce string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' https:; style-src 'unsafe-inline'; script-src 'nonce-"+nonce+
		"'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
}

// errorPage is what error.html shows: a title and a sentence in the
// payer's language, and for a refused request the shop's technical detail
// (folded away).
type errorPage struct {
	pageChrome
	Status       int
	Code, Detail string
	Title, Text  string
}

// renderError writes an error as an HTML page for the payer: never the raw
// error, but what it means to them, in their language.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, status int, d errorDetail) {
	p := errorPage{pageChrome: newChrome(w, r), Status: status, Code: d.Code}
	if r.Method != http.MethodGet {
		p.OtherURL = "" // the refused form cannot be sent again by a link
	}
	key := "err_server"
	switch {
	case status == http.StatusNotFound:
		key = "err_link"
	case status == http.StatusForbidden:
		key = "err_closed"
	case status == http.StatusTooManyRequests:
		key = "err_busy"
	case status < 500:
		key, p.Detail = "err_request", d.Message
	}
	p.Title = p.T[key]
	p.Text = p.T[map[string]string{"err_link": "err_link_text", "err_closed": "err_closed_text", "err_busy": "err_busy_text",
		"err_request": "err_request_txt", "err_server": "err_server_text"}[key]]
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "error.html", p); err != nil {
		h.logger().Error("render error page", "err", err)
		http.Error(w, d.Message, status)
		return
	}
	pageHeaders(w, p.Nonce)
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
