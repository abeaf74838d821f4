// Package gateway serves the payment gateway surface of docs/design.md, D6 under
// {pg_url}/v1: the signed checkout form (POST /v1/checkout/init), the hosted
// checkout page with its VietQR, the order API the public payment-gateway
// SDKs call (list, detail, cancel, void; Basic merchant_id:secret_key) and
// the merchant's IPN settings. Errors have the gateway shape of docs/design.md,
// D1: {"error":{"code":CODE,"message":TEXT}}, or an HTML page for a browser
// on the checkout routes.
package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"recon"
	"recon/checkout"
	"recon/ipn"
	"recon/web"
)

// Store is the storage the gateway needs.
type Store interface {
	recon.ListenStore
	// AppendAudit records the IPN target's changes (docs/dashboard.md,
	// Audit log).
	AppendAudit(ctx context.Context, e *recon.AuditEntry) error
	// recon.CompanyStore's:
	Company(ctx context.Context, id int64) (*recon.Company, error)
	// recon.HubStore's: the merchant's name and logo on the checkout page.
	HubBranding(ctx context.Context, tenant recon.TenantID) (*recon.HubBranding, error)
	// recon.TenantStore's:
	Tenant(ctx context.Context, id int64) (*recon.Tenant, error)
	// recon.BankAccountStore's:
	BankAccount(ctx context.Context, tenant recon.TenantID, id int64) (*recon.BankAccount, error)
	// recon.OrderStore's:
	Order(ctx context.Context, tenant recon.TenantID, invoiceNumber string) (*recon.Order, error)
	Orders(ctx context.Context, tenant recon.TenantID, f recon.OrderFilter) ([]*recon.Order, int64, error)
	MatchDecisions(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) ([]*recon.MatchDecision, error)
	// recon.VAStore's:
	OrderVAs(ctx context.Context, tenant recon.TenantID, orderIDs []int64) (map[int64][]*recon.VirtualAccount, error)
	// recon.MerchantStore's:
	MerchantByID(ctx context.Context, merchantID string) (*recon.Merchant, error)
	// recon.DeliveryStore's:
	RecordAttempts(ctx context.Context, outcomes []recon.AttemptOutcome) error
	Delivery(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Delivery, error)
	DeliveryTarget(ctx context.Context, companyID int64, kind string) (*recon.Target, error)
}

// Handler serves the payment gateway routes.
type Handler struct {
	Store Store
	// Checkout creates, cancels and voids orders (package checkout).
	Checkout *checkout.Service
	// IPN saves the IPN settings of PUT /v1/ipn (its URL checks and
	// secrets: package ipn).
	IPN     *ipn.Service
	Sandbox bool
	// Listeners and Headers serve `recon listen` (listen.go); without them
	// its routes answer 404. Headers builds a notification's headers as the
	// dispatcher sends them (delivery.Headers).
	Listeners *Listeners
	Headers   func(t *recon.Target, d *recon.Delivery, now time.Time) http.Header
	// ListenRecheck is how often an open listen stream checks its merchant
	// credential and company again (default DefaultListenRecheck);
	// ListenTick, when set, makes those ticks instead (tests): it returns
	// the channel and what stops it.
	ListenRecheck time.Duration
	ListenTick    func() (<-chan time.Time, func())
	// MaxListenStreams caps the listen streams open at once per merchant
	// credential on this node (default DefaultMaxListenStreams).
	MaxListenStreams int
	listenMu         sync.Mutex
	listenOpen       map[string]int // merchant id → streams open on this node
	// PagePoll is how often the hosted checkout page's script asks whether
	// the payment arrived (default 5 seconds; tests shorten it).
	PagePoll time.Duration
	// Location is the business time zone of created_at and the date filters (default UTC).
	Location *time.Location
	Clock    recon.Clock
	Logger   *slog.Logger
	// Rand is the randomness of listener ids (default crypto/rand).
	Rand io.Reader
	// Limiter limits each merchant's requests to the Basic-authenticated
	// endpoints (nil: no limit).
	Limiter *web.RateLimiter
}

// Register adds the gateway routes to mux.
func (h *Handler) Register(mux *web.Mux) {
	// Requests under /v1/ that fail before a handler get the gateway's envelope.
	mux.Family("/v1/", func(w http.ResponseWriter, _ *http.Request, status int, name, message string) {
		web.WriteJSON(w, status, errorBody{Error: errorDetail{Code: name, Message: message}, Message: message})
	})
	mux.HandleLimited("POST /v1/checkout/init", http.HandlerFunc(h.page(h.checkoutInit)), maxFormBody)
	mux.HandleFunc("GET /v1/checkout/{merchant}/{invoice}", h.page(h.checkoutPage))
	mux.HandleFunc("GET /v1/checkout/{merchant}/{invoice}/qr.png", h.page(h.checkoutQR))
	mux.HandleFunc("GET /v1/order", h.authed(h.listOrders))
	mux.HandleFunc("GET /v1/order/detail/{invoice}", h.authed(h.orderDetail))
	mux.HandleFunc("POST /v1/order/cancel", h.authed(h.cancelOrder))
	mux.HandleFunc("POST /v1/order/voidTransaction", h.authed(h.voidOrder))
	mux.HandleFunc("GET /v1/ipn", h.authed(h.getIPN))
	mux.HandleFunc("PUT /v1/ipn", h.authed(h.putIPN))
	mux.HandleFunc("GET /v1/listen", h.authed(h.listen))
	mux.HandleFunc("POST /v1/listen/answers", h.authed(h.listenAnswers))
}

func (h *Handler) now() time.Time {
	if h.Clock == nil {
		return time.Now()
	}
	return h.Clock.Now()
}

func (h *Handler) location() *time.Location {
	if h.Location == nil {
		return time.UTC
	}
	return h.Location
}

func (h *Handler) random() io.Reader {
	if h.Rand == nil {
		return rand.Reader
	}
	return h.Rand
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Logger
}

// page wraps a browser-facing handler: its errors are an HTML page when the
// request accepts text/html, the JSON body otherwise.
func (h *Handler) page(fn func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			h.writeError(w, r, err, wantsHTML(r))
		}
	}
}

// authed wraps an API handler with Basic merchant_id:secret_key authentication.
func (h *Handler) authed(fn func(w http.ResponseWriter, r *http.Request, m *recon.Merchant) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := h.authenticate(r)
		if err == nil && !h.Limiter.Allow(w.Header(), "merchant:"+m.MerchantID) {
			err = recon.Errorf(recon.ERATELIMITED, "too many requests from merchant %s: retry after %s s", m.MerchantID, w.Header().Get("Retry-After"))
		}
		if err == nil {
			err = fn(w, r, m)
		}
		if err != nil {
			h.writeError(w, r, err, false)
		}
	}
}

// dummySecret is compared against when the merchant id is unknown, so that
// an unknown id and a wrong secret take about the same time.
const dummySecret = "recon-gateway-unknown-merchant-0000000000000000"

func (h *Handler) authenticate(r *http.Request) (*recon.Merchant, error) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "send Authorization: Basic base64(merchant_id:secret_key)")
	}
	m, err := h.Store.MerchantByID(r.Context(), id)
	if recon.ErrorCode(err) == recon.ENOTFOUND {
		subtle.ConstantTimeCompare([]byte(secret), []byte(dummySecret))
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "the merchant id or secret key is wrong")
	}
	if err != nil {
		return nil, err
	}
	if !hmac.Equal([]byte(secret), []byte(m.SecretKey)) {
		return nil, recon.Errorf(recon.EUNAUTHORIZED, "the merchant id or secret key is wrong")
	}
	if err := h.companyActive(r.Context(), m.Tenant); err != nil {
		return nil, err
	}
	return m, nil
}

// companyActive returns recon.ErrCompanyInactive (403) unless the merchant's
// company is active. It is checked after the credentials, so that only the
// merchant learns its company's status.
func (h *Handler) companyActive(ctx context.Context, tenant recon.TenantID) error {
	t, err := h.Store.Tenant(ctx, tenant.ID())
	if err != nil {
		return err
	}
	return t.CheckActive()
}

// errorBody is the gateway error shape of docs/design.md, D1.
type errorBody struct {
	Error errorDetail `json:"error"`
	// Message repeats error.message at the top level, where the public PHP
	// SDK reads an error's text.
	Message string `json:"message"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

// writeError writes err as the gateway error body (or as an HTML page when
// html is set), with WWW-Authenticate on a 401. Internal errors are logged
// with the request id and never shown.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error, html bool) {
	code := recon.ErrorCode(err)
	status, name := web.ErrorStatus(err)
	if status == http.StatusInternalServerError {
		h.logger().ErrorContext(r.Context(), "internal error", "request_id", web.RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path, "err", err)
	}
	if code == recon.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Basic realm="recon"`)
	}
	web.SetRetryAfter(w.Header(), err)
	detail := errorDetail{Code: name, Message: recon.ErrorMessage(err)}
	var re *recon.ReasonError
	if errors.As(err, &re) {
		detail.Reason = re.Reason
	}
	if html {
		h.renderError(w, r, status, detail)
		return
	}
	web.WriteJSON(w, status, errorBody{Error: detail, Message: detail.Message})
}

// wantsHTML reports whether the client (a browser) accepts an HTML answer.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// orderJSON is an order as the order list shows it (spec §2.7; docs/api.md,
// Payment gateway).
type orderJSON struct {
	ID                   string  `json:"id"`
	CustomerID           string  `json:"customer_id"`
	OrderID              string  `json:"order_id"`
	InvoiceNumber        string  `json:"order_invoice_number"`
	Status               string  `json:"order_status"`
	Amount               string  `json:"order_amount"`
	Currency             string  `json:"order_currency"`
	Description          string  `json:"order_description"`
	AuthenticationStatus *string `json:"authentication_status"`
	CreatedAt            string  `json:"created_at"`
	UpdatedAt            string  `json:"updated_at"`
	Livemode             bool    `json:"livemode"`
}

func (h *Handler) toOrderJSON(o *recon.Order, m *recon.Merchant) orderJSON {
	return orderJSON{
		ID: strconv.FormatInt(o.ID, 10), CustomerID: o.CustomerID, OrderID: o.OrderID,
		InvoiceNumber: o.InvoiceNumber, Status: o.Status, Amount: recon.MoneyText(o.Amount),
		Currency: o.Currency, Description: o.Description,
		CreatedAt: h.localTime(o.CreatedAt), UpdatedAt: h.localTime(o.UpdatedAt), Livemode: m.Tenant.Live(),
	}
}

// localTime renders an instant as wall-clock time in the business time zone.
func (h *Handler) localTime(t time.Time) string {
	return t.In(h.location()).Format(recon.DateTimeLayout)
}

// nullableTime is localTime, or nil for the zero time.
func (h *Handler) nullableTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := h.localTime(t)
	return &s
}
