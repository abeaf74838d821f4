package recon

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// IPN notification types (spec §2.8, §6.2; docs/api.md, Payment gateway;
// the API v2 ones: docs/api-v2.md, Notifications).
const (
	IPNOrderPaid       = "ORDER_PAID"
	IPNTransactionVoid = "TRANSACTION_VOID"
	// API v2: sent only to a target that subscribes (IPNWants).
	IPNOrderPartiallyPaid = "ORDER_PARTIALLY_PAID"
	IPNOrderExpired       = "ORDER_EXPIRED"
	IPNRefundSucceeded    = "REFUND_SUCCEEDED"
	IPNRefundFailed       = "REFUND_FAILED"
	// Electronic invoices (docs/invoices.md): the provider's answer.
	IPNInvoiceIssued = "INVOICE_ISSUED"
	IPNInvoiceFailed = "INVOICE_FAILED"
	// Endpoint health (docs/api.md, Endpoint health): another target of
	// the company was disabled by Recon; its own body (EndpointDisabledDelivery).
	IPNEndpointDisabled = EndpointDisabled
)

// IPNTypes lists every notification type a target may subscribe to.
var IPNTypes = []string{IPNOrderPaid, IPNTransactionVoid, IPNOrderPartiallyPaid, IPNOrderExpired, IPNRefundSucceeded, IPNRefundFailed,
	IPNInvoiceIssued, IPNInvoiceFailed, IPNEndpointDisabled}

// DefaultIPNTypes are what a target subscribes to when it never chose: what
// v1 sent before API v2 existed, so a receiver written for v1 sees no new
// type (docs/api-v2.md, Notifications).
var DefaultIPNTypes = []string{IPNOrderPaid, IPNTransactionVoid}

// IPNSettings is what an IPN target's settings (delivery_targets.settings,
// JSON) hold: the notification types it subscribes to, nil for
// DefaultIPNTypes.
type IPNSettings struct {
	NotificationTypes []string `json:"notification_types,omitempty"`
}

// Types returns the types the target subscribes to.
func (s IPNSettings) Types() []string {
	if s.NotificationTypes == nil {
		return DefaultIPNTypes
	}
	return s.NotificationTypes
}

// ParseIPNTypes checks a list of notification types as a merchant gives it
// (PUT /v1/ipn notification_types, the dashboard, the CLI): each known,
// none twice, at least one. The result keeps the given order.
func ParseIPNTypes(types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, FieldError("notification_types", "notification_types needs at least one of %s", strings.Join(IPNTypes, ", "))
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		switch {
		case !slices.Contains(IPNTypes, t):
			return nil, FieldError("notification_types", "unknown notification type %q (known: %s)", t, strings.Join(IPNTypes, ", "))
		case slices.Contains(out, t):
			return nil, FieldError("notification_types", "notification type %q is listed twice", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// IPNWants reports whether an IPN target whose settings JSON is settings
// subscribes to notification type t. Settings saved before API v2 ("{}")
// subscribe to DefaultIPNTypes.
func IPNWants(settings, t string) (bool, error) {
	s, err := ParseIPNSettings(settings)
	if err != nil {
		return false, err
	}
	return slices.Contains(s.Types(), t), nil
}

// ParseIPNSettings reads an IPN target's settings JSON (Target.Settings);
// "" is "{}", the settings of a target saved before API v2.
func ParseIPNSettings(settings string) (IPNSettings, error) {
	var s IPNSettings
	if settings != "" {
		if err := json.Unmarshal([]byte(settings), &s); err != nil {
			return IPNSettings{}, fmt.Errorf("recon: IPN target settings: %w", err)
		}
	}
	return s, nil
}

// MoneyText renders whole VND as the spec's decimal text with 2 fraction digits.
func MoneyText(vnd int64) string { return strconv.FormatInt(vnd, 10) + ".00" }

type ipnBody struct {
	Timestamp        int64          `json:"timestamp"`
	NotificationType string         `json:"notification_type"`
	Order            ipnOrder       `json:"order"`
	Transaction      ipnTransaction `json:"transaction"`
	Customer         ipnCustomer    `json:"customer"`
}

type ipnOrder struct {
	ID                 string          `json:"id"`
	OrderID            string          `json:"order_id"`
	OrderStatus        string          `json:"order_status"`
	OrderCurrency      string          `json:"order_currency"`
	OrderAmount        string          `json:"order_amount"`
	OrderInvoiceNumber string          `json:"order_invoice_number"`
	CustomData         json.RawMessage `json:"custom_data"`
	CustomDataSigned   bool            `json:"custom_data_signed"`
	UserAgent          string          `json:"user_agent"`
	IPAddress          string          `json:"ip_address"`
	OrderDescription   string          `json:"order_description"`
}

type ipnTransaction struct {
	ID                   string `json:"id"`
	PaymentMethod        string `json:"payment_method"`
	TransactionID        string `json:"transaction_id"`
	TransactionType      string `json:"transaction_type"`
	TransactionDate      string `json:"transaction_date"`
	TransactionStatus    string `json:"transaction_status"`
	TransactionAmount    string `json:"transaction_amount"`
	TransactionCurrency  string `json:"transaction_currency"`
	AuthenticationStatus string `json:"authentication_status"`
	CardNumber           string `json:"card_number"`
	CardHolderName       string `json:"card_holder_name"`
	CardExpiry           string `json:"card_expiry"`
	CardFundingMethod    string `json:"card_funding_method"`
	CardBrand            string `json:"card_brand"`
}

type ipnCustomer struct {
	ID         string `json:"id"`
	CustomerID string `json:"customer_id"`
}

// IPNDelivery builds the outbox row of an IPN about o (spec §2.8; docs/api.md,
// Payment gateway; docs/api-v2.md, Notifications), all in the §2.8 body:
//   - IPNOrderPaid: transaction APPROVED, PAYMENT: the transfer that
//     completed the payment (o.PaidTransactionID), dated o.PaidAt, a
//     wall-clock time, for the order's paid amount;
//   - IPNOrderPartiallyPaid: likewise for a transfer that paid part of it
//     (the caller sets o.PaidTransactionID and o.PaidAt to that transfer's;
//     the amount is what is paid so far);
//   - IPNTransactionVoid: transaction VOIDED, VOID, dated at;
//   - IPNOrderExpired: transaction EXPIRED, EXPIRY, dated at, with what was
//     paid before the order expired.
//
// at is when the notification is made, in the business time zone. Bank
// transfers carry no card, so the card fields are empty strings.
func IPNDelivery(o *Order, event string, at time.Time) (*Delivery, error) {
	status, kind := "APPROVED", "PAYMENT"
	switch event {
	case IPNOrderPaid, IPNOrderPartiallyPaid:
	case IPNTransactionVoid:
		status, kind = "VOIDED", "VOID"
	case IPNOrderExpired:
		status, kind = "EXPIRED", "EXPIRY"
	default:
		return nil, fmt.Errorf("recon: unknown IPN event %q", event)
	}
	custom := json.RawMessage(o.CustomData)
	if !json.Valid(custom) {
		custom = json.RawMessage("[]")
	}
	txDate := o.PaidAt
	if kind != "PAYMENT" || txDate.IsZero() {
		txDate = at
	}
	body := ipnBody{
		Timestamp:        at.Unix(),
		NotificationType: event,
		Order: ipnOrder{
			ID: strconv.FormatInt(o.ID, 10), OrderID: o.OrderID, OrderStatus: o.Status, OrderCurrency: o.Currency,
			OrderAmount: MoneyText(o.Amount), OrderInvoiceNumber: o.InvoiceNumber, CustomData: custom,
			CustomDataSigned: o.CustomDataSigned, UserAgent: o.UserAgent, IPAddress: o.IPAddress, OrderDescription: o.Description,
		},
		Transaction: ipnTransaction{
			ID: strconv.FormatInt(o.PaidTransactionID, 10), PaymentMethod: "BANK_TRANSFER",
			TransactionID: strconv.FormatInt(o.PaidTransactionID, 10), TransactionType: kind,
			TransactionDate: txDate.Format(DateTimeLayout), TransactionStatus: status,
			TransactionAmount: MoneyText(o.PaidAmount), TransactionCurrency: o.Currency,
			AuthenticationStatus: "AUTHENTICATION_NOT_NEEDED",
		},
		Customer: ipnCustomer{ID: o.CustomerID, CustomerID: o.CustomerID},
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return &Delivery{CompanyID: o.CompanyID, Kind: DeliveryIPN, OrderID: o.ID, Event: event, Payload: payload}, nil
}
