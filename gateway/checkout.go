package gateway

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"recon"
	"recon/checkout"
)

// maxFormBody bounds a checkout form body.
const maxFormBody = 64 << 10

// Field limits of a checkout form.
const (
	maxInvoiceLen     = 100
	maxDescriptionLen = 1000
	maxIDLen          = 100
	maxURLLen         = 2000
	maxCustomDataLen  = 4096
	maxUserAgentLen   = 512
)

// checkoutForm is a validated checkout form.
type checkoutForm struct {
	invoice, orderID, customerID, description string
	amount                                    int64
	successURL, errorURL, cancelURL           string
	customData                                string
}

// checkoutInit serves POST /v1/checkout/init: the merchant's signed form,
// posted by the payer's browser. On success it creates the order
// (checkout.Service.Create: the bank account, the payment code) and sends
// the browser (303) to the hosted checkout page. Nothing is created when any
// check fails. A signed value that could move the boundary between signed
// fields (see checkBoundaries) is refused. custom_data is signed when the
// merchant signs it, else stored marked unsigned (verifyForm). Of the
// unsigned fields only signature and custom_data are read; others
// (branch_code of the PHP SDK, anything an SDK adds) are ignored, as they
// cannot change the order.
func (h *Handler) checkoutInit(w http.ResponseWriter, r *http.Request) error {
	fields, err := readForm(r)
	if err != nil {
		return err
	}
	get := func(name string) (string, bool) {
		for _, f := range fields {
			if f.name == name {
				return f.value, true
			}
		}
		return "", false
	}
	merchantID, _ := get("merchant")
	signature, _ := get("signature")
	if merchantID == "" {
		return recon.FieldError("merchant", "merchant is required")
	}
	if signature == "" {
		return recon.FieldError("signature", "signature is required")
	}
	m, err := h.Store.MerchantByID(r.Context(), merchantID)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		return recon.FieldError("merchant", "unknown merchant %q", printable(merchantID))
	}
	if err != nil {
		return err
	}
	customDataSigned, err := verifyForm(m.SecretKey, fields, signature)
	if err != nil {
		return err
	}
	if err := h.companyActive(r.Context(), m.Tenant); err != nil {
		return err
	}
	form, err := validateCheckout(get)
	if err != nil {
		return err
	}
	o, err := h.Checkout.Create(r.Context(), m.Tenant, checkout.Input{
		InvoiceNumber: form.invoice, OrderID: form.orderID, CustomerID: form.customerID, Amount: form.amount,
		Description: form.description, SuccessURL: form.successURL, ErrorURL: form.errorURL, CancelURL: form.cancelURL,
		CustomData: form.customData, CustomDataSigned: customDataSigned,
		UserAgent: headerText(r.UserAgent(), maxUserAgentLen), IPAddress: clientIP(r),
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, checkoutPath(m, o.InvoiceNumber), http.StatusSeeOther)
	return nil
}

// readForm reads and parses the form body of r, which the route's own limit
// (maxFormBody, applied by the mux) bounds.
func readForm(r *http.Request) ([]field, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, recon.Errorf(recon.EINVALID, "the checkout form must be posted as application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, recon.Errorf(recon.EINVALID, "the form is larger than the limit of %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, recon.Errorf(recon.EINVALID, "the form could not be read")
	}
	return parseForm(string(body))
}

// validateCheckout checks the fields of a correctly signed form.
func validateCheckout(get func(string) (string, bool)) (*checkoutForm, error) {
	var f checkoutForm
	if v, ok := get("operation"); !ok || v == "" {
		return nil, recon.FieldError("operation", "operation is required (PURCHASE)")
	} else if v != "PURCHASE" {
		return nil, recon.FieldError("operation", "operation %q is not supported: only PURCHASE is", printable(v))
	}
	if v, _ := get("payment_method"); v != "" && v != "BANK_TRANSFER" {
		return nil, recon.FieldError("payment_method", "payment_method %q is not supported: only BANK_TRANSFER is", printable(v))
	}
	if v, ok := get("env"); ok && v != "sandbox" && v != "production" {
		return nil, recon.FieldError("env", "env must be sandbox or production")
	}
	for _, name := range []string{"agreement_id", "agreement_name", "agreement_type", "agreement_payment_frequency", "agreement_amount_per_payment"} {
		if _, ok := get(name); ok {
			return nil, recon.FieldError(name, "recurring payments (%s) are not supported", name)
		}
	}
	f.invoice, _ = get("order_invoice_number")
	if !validInvoice(f.invoice) {
		return nil, recon.FieldError("order_invoice_number", "order_invoice_number is required: 1 to %d letters, digits, _ or -", maxInvoiceLen)
	}
	amount, ok := get("order_amount")
	if !ok || amount == "" {
		return nil, recon.FieldError("order_amount", "order_amount is required")
	}
	n, err := parseAmount(amount)
	if err != nil {
		return nil, recon.FieldError("order_amount", "order_amount must be a whole number of VND greater than 0: %s", err)
	}
	f.amount = n
	switch cur, _ := get("currency"); cur {
	case "VND":
	case "":
		return nil, recon.FieldError("currency", "currency is required (VND)")
	default:
		return nil, recon.FieldError("currency", "currency %q is not supported: only VND is", printable(cur))
	}
	for _, s := range []struct {
		name string
		dst  *string
		max  int
	}{{"order_description", &f.description, maxDescriptionLen}, {"customer_id", &f.customerID, maxIDLen}, {"order_id", &f.orderID, maxIDLen}} {
		v, _ := get(s.name)
		if utf8.RuneCountInString(v) > s.max {
			return nil, recon.FieldError(s.name, "%s must be at most %d characters", s.name, s.max)
		}
		*s.dst = v
	}
	for _, u := range []struct {
		name string
		dst  *string
	}{{"success_url", &f.successURL}, {"error_url", &f.errorURL}, {"cancel_url", &f.cancelURL}} {
		v, _ := get(u.name)
		if v != "" && !validReturnURL(v) {
			return nil, recon.FieldError(u.name, "%s must be an absolute http or https URL of at most %d characters", u.name, maxURLLen)
		}
		*u.dst = v
	}
	cd, _ := get("custom_data")
	if f.customData, err = customData(cd); err != nil {
		return nil, err
	}
	return &f, nil
}

func validInvoice(s string) bool {
	if s == "" || len(s) > maxInvoiceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// parseAmount reads a whole VND amount: digits, optionally with a zero
// fraction ("150000.00"). VND has no minor unit.
func parseAmount(s string) (int64, error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if hasFrac && (frac == "" || strings.Trim(frac, "0") != "") {
		return 0, errors.New("VND has no minor unit")
	}
	if whole == "" || strings.TrimLeft(whole, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", printable(s))
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n > recon.MaxAmount {
		return 0, fmt.Errorf("at most %d", int64(recon.MaxAmount))
	}
	if n == 0 {
		return 0, errors.New("it is 0")
	}
	return n, nil
}

// validReturnURL accepts the absolute http(s) URLs the browser is sent back
// to. They are links, never fetched by the server, so no address check.
func validReturnURL(s string) bool {
	if len(s) > maxURLLen {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.User == nil
}

// customData turns the custom_data field into the JSON array stored with the
// order: a JSON array is kept (compacted), any other text becomes a
// one-string array, and an absent field an empty array.
func customData(s string) (string, error) {
	if len(s) > maxCustomDataLen {
		return "", recon.FieldError("custom_data", "custom_data must be at most %d bytes", maxCustomDataLen)
	}
	if strings.TrimSpace(s) == "" {
		return "[]", nil
	}
	var buf bytes.Buffer
	if strings.HasPrefix(strings.TrimSpace(s), "[") && json.Valid([]byte(s)) {
		if err := json.Compact(&buf, []byte(s)); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode([]string{s}); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// headerText makes a header value fit to store: at most n bytes of valid
// UTF-8 without control characters. Go accepts any byte from 0x80 up in a
// header, which PostgreSQL refuses to store as text; a User-Agent is kept
// for information only, so it is cleaned rather than refused.
func headerText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// clientIP is the address the request came from. Forwarding headers are not
// trusted: a proxy in front should set RemoteAddr (e.g. PROXY protocol).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// checkoutToken authorizes viewing an order's hosted checkout page: hex
// HMAC-SHA256(secret_key, "recon-checkout:"+invoice). Unguessable without
// the merchant's secret, so invoice numbers (often sequential) reveal nothing.
func checkoutToken(m *recon.Merchant, invoice string) string {
	mac := hmac.New(sha256.New, []byte(m.SecretKey))
	mac.Write([]byte("recon-checkout:" + invoice))
	return hex.EncodeToString(mac.Sum(nil))
}

// checkoutPath is the hosted checkout page of an order.
func checkoutPath(m *recon.Merchant, invoice string) string {
	return "/v1/checkout/" + url.PathEscape(m.MerchantID) + "/" + url.PathEscape(invoice) + "?t=" + checkoutToken(m, invoice)
}
