package client

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Order states (spec §3; docs/api.md, Payment gateway).
const (
	OrderAwaitingPayment = "AUTHENTICATION_NOT_NEEDED"
	OrderCaptured        = "CAPTURED"
	OrderCancelled       = "CANCELLED"
)

// Order is a gateway order (spec §2.7; docs/api.md, Payment gateway). Amounts
// are decimal text with 2 fraction digits ("150000.00").
type Order struct {
	ID                   string  `json:"id"`
	CustomerID           string  `json:"customer_id"`
	OrderID              string  `json:"order_id"`
	InvoiceNumber        string  `json:"order_invoice_number"`
	Status               string  `json:"order_status"`
	Amount               string  `json:"order_amount"`
	Currency             string  `json:"order_currency"`
	Description          string  `json:"order_description"`
	AuthenticationStatus *string `json:"authentication_status"`
	CreatedAt            string  `json:"created_at"` // YYYY-MM-DD HH:MM:SS, business time zone
	UpdatedAt            string  `json:"updated_at"`
}

// OrderDetail is an order with its transfers, payment and every matching
// decision about it.
type OrderDetail struct {
	Order
	Transactions []struct {
		ID                   string `json:"id"`
		PaymentMethod        string `json:"payment_method"`
		TransactionType      string `json:"transaction_type"`
		TransactionAmount    string `json:"transaction_amount"`
		TransactionCurrency  string `json:"transaction_currency"`
		TransactionStatus    string `json:"transaction_status"`
		AuthenticationStatus string `json:"authentication_status"`
		TransactionDate      string `json:"transaction_date"`
	} `json:"transactions"`
	Payment struct {
		Method         string  `json:"method"`
		Code           string  `json:"code"` // the memo code the payer writes
		VirtualAccount *string `json:"virtual_account"`
		BankAccount    *struct {
			ID            int64  `json:"id"`
			BankName      string `json:"bank_name"`
			AccountNumber string `json:"account_number"`
			HolderName    string `json:"holder_name"`
		} `json:"bank_account"`
		PaidAmount  string  `json:"paid_amount"`
		PaidAt      *string `json:"paid_at"`
		CancelledAt *string `json:"cancelled_at"`
		VoidedAt    *string `json:"voided_at"`
		CheckoutURL string  `json:"checkout_url"` // the hosted page, a path on the gateway
	} `json:"payment"`
	MatchDecisions []struct {
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
	} `json:"match_decisions"`
}

// OrderFilter selects orders (spec §4.6; docs/api.md, Payment gateway). Zero
// fields filter nothing.
type OrderFilter struct {
	Query         string // substring of invoice number, order id, description, customer id
	Status        string // OrderCaptured, OrderCancelled, OrderAwaitingPayment
	CustomerID    string
	CreatedAt     string // YYYY-MM-DD: one whole day
	FromCreatedAt string // YYYY-MM-DD, inclusive
	EndCreatedAt  string // YYYY-MM-DD, inclusive
	Ascending     bool   // oldest first (default newest first)
	PerPage       int    // 1 to 100 (0: 20)
	Page          int    // 1-based (0: 1)
}

// OrderPage is one page of the order list, with its meta (spec §2.7;
// docs/api.md, Payment gateway).
type OrderPage struct {
	Orders []Order `json:"data"`
	Meta   struct {
		PerPage     int   `json:"per_page"`
		Total       int64 `json:"total"`
		HasMore     bool  `json:"has_more"`
		CurrentPage int   `json:"current_page"`
		PageCount   int64 `json:"page_count"`
	} `json:"meta"`
}

// ListOrders returns one page of the merchant's orders: GET /v1/order.
func (c *Client) ListOrders(ctx context.Context, f OrderFilter) (*OrderPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"q": f.Query, "order_status": f.Status, "customer_id": f.CustomerID,
		"created_at": f.CreatedAt, "from_created_at": f.FromCreatedAt, "end_created_at": f.EndCreatedAt} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Ascending {
		q.Set("sort", "created_at:asc")
	}
	if f.PerPage != 0 {
		q.Set("per_page", strconv.Itoa(f.PerPage))
	}
	if f.Page > 1 {
		q.Set("page", strconv.Itoa(f.Page))
	}
	var out OrderPage
	if _, err := c.do(ctx, &request{method: "GET", path: "/v1/order", query: q, gateway: true, auth: authMerchant, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Orders iterates over every order the filter selects, from f.Page on,
// page after page. An error ends the iteration.
func (c *Client) Orders(ctx context.Context, f OrderFilter) iter.Seq2[Order, error] {
	return func(yield func(Order, error) bool) {
		f.Page = max(f.Page, 1)
		var prev map[string]bool
		for ; ; f.Page++ {
			p, err := c.ListOrders(ctx, f)
			if err != nil {
				yield(Order{}, err)
				return
			}
			seen := make(map[string]bool, len(p.Orders))
			for _, o := range p.Orders {
				seen[o.ID] = true
				if prev[o.ID] { // shifted by an order created meanwhile
					continue
				}
				if !yield(o, nil) {
					return
				}
			}
			if !p.Meta.HasMore || len(p.Orders) == 0 {
				return
			}
			prev = seen
		}
	}
}

// GetOrder returns an order by its invoice number: GET /v1/order/detail/{invoice}.
func (c *Client) GetOrder(ctx context.Context, invoiceNumber string) (*OrderDetail, error) {
	var out envelope[OrderDetail]
	_, err := c.do(ctx, &request{method: "GET", path: "/v1/order/detail/" + url.PathEscape(invoiceNumber), gateway: true,
		auth: authMerchant, idempotent: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// CancelOrder cancels an unpaid order (no IPN): POST /v1/order/cancel. A
// paid or cancelled order is a 409 conflict. Not retried on 5xx: a cancel
// that reached the server would be a 409 the second time.
func (c *Client) CancelOrder(ctx context.Context, invoiceNumber string) (*Order, error) {
	return c.orderAction(ctx, "/v1/order/cancel", invoiceNumber)
}

// VoidOrder voids a paid order: it becomes CANCELLED and a TRANSACTION_VOID
// IPN is sent. POST /v1/order/voidTransaction. An unpaid or cancelled order
// is a 409 conflict. Not retried on 5xx, as CancelOrder.
func (c *Client) VoidOrder(ctx context.Context, invoiceNumber string) (*Order, error) {
	return c.orderAction(ctx, "/v1/order/voidTransaction", invoiceNumber)
}

func (c *Client) orderAction(ctx context.Context, path, invoice string) (*Order, error) {
	var out struct {
		Data Order `json:"data"`
	}
	_, err := c.do(ctx, &request{method: "POST", path: path, gateway: true, auth: authMerchant,
		json: map[string]string{"order_invoice_number": invoice}}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// IPN auth types.
const (
	AuthSecretKey = "SECRET_KEY" // the IPN carries X-Secret-Key
	AuthNone      = "NONE"
)

// IPNSettings are the merchant's IPN settings. A secret is shown in full
// only in the answer that made it; elsewhere it is "***" and its last 4
// characters.
type IPNSettings struct {
	URL       string  `json:"ipn_url"`
	AuthType  string  `json:"auth_type"`
	SecretKey *string `json:"secret_key"` // nil with AuthNone
	// SigningSecret verifies X-Recon-Signature (VerifySignature): keep it
	// from the answer that created or rotated it.
	SigningSecret string `json:"signing_secret"`
	Active        int    `json:"active"`
	// NotificationTypes are the notification types the target receives
	// (docs/api-v2.md, Notifications).
	NotificationTypes []string `json:"notification_types"`
}

// IPNSettingsInput replaces the IPN settings (PUT /v1/ipn).
type IPNSettingsInput struct {
	URL       string  `json:"ipn_url"`
	AuthType  string  `json:"auth_type,omitempty"`  // default SECRET_KEY
	SecretKey *string `json:"secret_key,omitempty"` // nil keeps the stored one, or makes one
	// Active: nil is 1 (on).
	Active              *int `json:"active,omitempty"`
	RotateSigningSecret bool `json:"rotate_signing_secret,omitempty"`
	// NotificationTypes replaces the notification types the target
	// receives; nil (or empty) keeps what it had (ORDER_PAID and TRANSACTION_VOID for a
	// target that never chose). The types: docs/api-v2.md, Notifications.
	NotificationTypes []string `json:"notification_types,omitempty"`
}

// IPNSettings returns the merchant's IPN settings (secrets masked), or nil
// when none are set: GET /v1/ipn.
func (c *Client) IPNSettings(ctx context.Context) (*IPNSettings, error) {
	var out struct {
		Data *IPNSettings `json:"data"`
	}
	if _, err := c.do(ctx, &request{method: "GET", path: "/v1/ipn", gateway: true, auth: authMerchant, idempotent: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// SetIPNSettings replaces the merchant's IPN settings: PUT /v1/ipn. The
// answer shows the secrets this request made in full. Not retried on 5xx
// when it makes a secret (rotation, or no secret_key given): a second
// attempt would make another one.
func (c *Client) SetIPNSettings(ctx context.Context, in IPNSettingsInput) (*IPNSettings, error) {
	var out struct {
		Data IPNSettings `json:"data"`
	}
	_, err := c.do(ctx, &request{method: "PUT", path: "/v1/ipn", gateway: true, auth: authMerchant, json: in,
		idempotent: !in.RotateSigningSecret && (in.SecretKey != nil || in.AuthType == AuthNone)}, &out)
	if err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// Field is one name=value pair of a checkout form, in posting order.
type Field struct{ Name, Value string }

// signedFields are the checkout fields the signature covers (docs/api.md, Payment gateway),
// custom_data included: the server marks a custom_data the signature does
// not cover as unsigned in the IPN (docs/api.md, Payment gateway).
var signedFields = []string{
	"merchant", "env", "operation", "payment_method", "order_amount", "currency", "order_invoice_number",
	"order_description", "customer_id", "agreement_id", "agreement_name", "agreement_type",
	"agreement_payment_frequency", "agreement_amount_per_payment", "success_url", "error_url", "cancel_url", "order_id",
	"custom_data",
}

// ErrBoundary is the error of SignCheckout for a signed value holding ","
// followed by a signed field's name and "=", which the server refuses: the
// signed string joins the fields with commas, so such a value could move
// the boundaries between fields.
var ErrBoundary = errors.New("recon: a signed checkout value must not contain a comma followed by a signed field's name and =")

// SignCheckout returns the signature of a checkout form whose fields are
// posted in this order: base64(HMAC-SHA256(secret, "k=v,k=v,...")) over
// the signed fields present (merchant, operation, order_amount, ...,
// custom_data; others, such as signature, are skipped), with their values
// as posted, before URL encoding. custom_data is signed so that the IPN
// carries it as signed (custom_data_signed); the server still accepts a
// form whose signature leaves custom_data out, as the public SDKs sign, and
// marks its custom_data unsigned. It refuses what the server
// refuses: a repeated or empty name, text that is not UTF-8, and a signed
// value containing ",NAME=" for a signed field NAME (ErrBoundary).
func SignCheckout(secret string, fields []Field) (string, error) {
	var b strings.Builder
	seen := map[string]bool{}
	for _, f := range fields {
		switch {
		case f.Name == "":
			return "", errors.New("recon: a checkout field has no name")
		case seen[f.Name]:
			return "", fmt.Errorf("recon: the checkout field %s is given more than once", f.Name)
		case !utf8.ValidString(f.Name) || !utf8.ValidString(f.Value):
			return "", fmt.Errorf("recon: the checkout field %q is not valid UTF-8", f.Name)
		}
		seen[f.Name] = true
		if !slices.Contains(signedFields, f.Name) {
			continue
		}
		for _, name := range signedFields {
			if strings.Contains(f.Value, ","+name+"=") {
				return "", fmt.Errorf("%w: %s contains %q", ErrBoundary, f.Name, ","+name+"=")
			}
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name + "=" + f.Value)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(b.String()))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// Checkout is an order for the hosted checkout (POST /v1/checkout/init),
// made by the merchant's site and posted by the payer's browser.
type Checkout struct {
	MerchantID    string // from recon merchant credentials
	InvoiceNumber string // 1 to 100 letters, digits, _ or -; unique per merchant
	Amount        int64  // whole VND
	Description   string
	CustomerID    string
	OrderID       string
	SuccessURL    string // where the browser goes after paying
	ErrorURL      string
	CancelURL     string
	CustomData    string // signed; a JSON array is kept as it is
	Env           string // "sandbox", "production" or empty
}

// CheckoutForm is a signed checkout form. Its fields come in name order, so
// that url.Values (whose Encode sorts by name), Encode and the HTML form all
// post them in the order they were signed.
type CheckoutForm struct {
	Action string  // the URL the form posts to
	Fields []Field // in name order, signature included
}

// NewCheckoutForm signs a checkout for the gateway at gatewayURL (the
// server's base URL) with the merchant's secret key.
func NewCheckoutForm(gatewayURL, secretKey string, ck Checkout) (*CheckoutForm, error) {
	base, err := parseBase(gatewayURL)
	if err != nil {
		return nil, err
	}
	fields := []Field{
		{"cancel_url", ck.CancelURL}, {"currency", "VND"}, {"custom_data", ck.CustomData}, {"customer_id", ck.CustomerID},
		{"env", ck.Env}, {"error_url", ck.ErrorURL}, {"merchant", ck.MerchantID}, {"operation", "PURCHASE"},
		{"order_amount", strconv.FormatInt(ck.Amount, 10)}, {"order_description", ck.Description}, {"order_id", ck.OrderID},
		{"order_invoice_number", ck.InvoiceNumber}, {"payment_method", "BANK_TRANSFER"}, {"success_url", ck.SuccessURL},
	}
	fields = slices.DeleteFunc(fields, func(f Field) bool { return f.Value == "" })
	sig, err := SignCheckout(secretKey, fields)
	if err != nil {
		return nil, err
	}
	fields = append(fields, Field{"signature", sig})
	slices.SortFunc(fields, func(a, b Field) int { return strings.Compare(a.Name, b.Name) })
	return &CheckoutForm{Action: base.String() + "/v1/checkout/init", Fields: fields}, nil
}

// Values returns the form's fields as url.Values (for http.PostForm).
func (f *CheckoutForm) Values() url.Values {
	v := url.Values{}
	for _, x := range f.Fields {
		v.Set(x.Name, x.Value)
	}
	return v
}

// Encode returns the form body, application/x-www-form-urlencoded, in order.
func (f *CheckoutForm) Encode() string {
	parts := make([]string, len(f.Fields))
	for i, x := range f.Fields {
		parts[i] = url.QueryEscape(x.Name) + "=" + url.QueryEscape(x.Value)
	}
	return strings.Join(parts, "&")
}

var checkoutPage = template.Must(template.New("checkout").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Checkout</title></head>
<body onload="document.forms[0].submit()">
<form method="post" action="{{.Action}}" accept-charset="utf-8">
{{- range .Fields}}
<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{- end}}
<noscript><button type="submit">Continue to payment</button></noscript>
</form>
</body></html>
`))

// HTML renders a page that posts the form at once (a button without
// JavaScript): serve it to the payer's browser.
func (f *CheckoutForm) HTML() (string, error) {
	var b bytes.Buffer
	if err := checkoutPage.Execute(&b, f); err != nil {
		return "", err
	}
	return b.String(), nil
}

// CreateCheckout posts a signed checkout form from the server side (tests,
// or a merchant that redirects the payer itself) and returns the hosted
// checkout page's URL that the server redirects to. Never retried: a second
// attempt would be a 409 for the invoice number.
func (c *Client) CreateCheckout(ctx context.Context, f *CheckoutForm) (string, error) {
	resp, err := c.do(ctx, &request{method: "POST", path: "/v1/checkout/init", gateway: true,
		raw: strings.NewReader(f.Encode()), contentType: "application/x-www-form-urlencoded", noRedirect: true}, nil)
	if err != nil {
		return "", err
	}
	loc := resp.header.Get("Location")
	if resp.status != 303 || loc == "" {
		return "", fmt.Errorf("recon: checkout answered %d without a redirect", resp.status)
	}
	u, err := c.gatewayBase.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("recon: checkout redirect %q: %w", loc, err)
	}
	return u.String(), nil
}
