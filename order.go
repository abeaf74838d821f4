package recon

import (
	"context"
	"time"
)

// Order statuses (spec §3; docs/api.md, Payment gateway; docs/design.md, D6).
const (
	OrderAwaitingPayment = "AUTHENTICATION_NOT_NEEDED"
	OrderCaptured        = "CAPTURED"
	OrderCancelled       = "CANCELLED"
)

// OrderStatuses lists every order status.
var OrderStatuses = []string{OrderCaptured, OrderCancelled, OrderAwaitingPayment}

// OrderEvent is what a merchant or a person does to an order: cancel an
// unpaid one or void a paid one. Capture is a payment's doing
// (MatchPayments, SettlePayments), not an event.
type OrderEvent string

// Order events.
const (
	// OrderCancel withdraws an order awaiting payment: CANCELLED, with no
	// notification.
	OrderCancel OrderEvent = "cancel"
	// OrderVoid voids a captured order: CANCELLED, and a TRANSACTION_VOID
	// notification.
	OrderVoid OrderEvent = "void"
)

// orderEventFrom is the status each event applies to.
var orderEventFrom = map[OrderEvent]string{OrderCancel: OrderAwaitingPayment, OrderVoid: OrderCaptured}

// OrderAllows reports whether event applies to o as it is: a cancel to an
// order awaiting payment, a void to a captured one.
func OrderAllows(o *Order, event OrderEvent) bool {
	from, ok := orderEventFrom[event]
	return ok && o.Status == from
}

// NextOrder returns o after event at now: CANCELLED, updated and stamped
// (CancelledAt for a cancel, VoidedAt for a void). o is not changed: the
// store locks the order, calls it and writes the result. An event the order's
// status does not allow is ECONFLICT naming why: already cancelled, paid (void
// it instead) or not paid (cancel it instead).
func NextOrder(o *Order, event OrderEvent, now time.Time) (*Order, error) {
	from, ok := orderEventFrom[event]
	switch {
	case !ok:
		return nil, Errorf(EINVALID, "unknown order event %q", event)
	case o.Status == from:
	case o.Status == OrderCancelled:
		return nil, Errorf(ECONFLICT, "order %s is already cancelled", o.InvoiceNumber)
	case o.Status == OrderCaptured:
		return nil, Errorf(ECONFLICT, "order %s is paid: void it instead of cancelling", o.InvoiceNumber)
	default:
		return nil, Errorf(ECONFLICT, "order %s is not paid: cancel it instead of voiding", o.InvoiceNumber)
	}
	n := *o
	n.Status, n.UpdatedAt = OrderCancelled, now
	if event == OrderVoid {
		n.VoidedAt = now
	} else {
		n.CancelledAt = now
	}
	return &n, nil
}

// Order is a payment order of the gateway: created at checkout, paid by a
// bank transfer whose memo carries PaymentCode (or sent to VirtualAccount).
type Order struct {
	ID int64
	// PublicID is the order's id in API v2 (an xid in UUID form): random
	// for every order made since migration 00026, derived from ID for those
	// before it (docs/api-v2.md, Orders).
	PublicID      string
	CompanyID     int64
	InvoiceNumber string // order_invoice_number, unique per company
	OrderID       string // the merchant's own order id, optional
	CustomerID    string
	Status        string
	Amount        int64 // whole VND
	Currency      string
	Description   string
	// PaymentCode is the memo code the payer writes, e.g. DH20261121001.
	PaymentCode string
	// VirtualAccount is a per-order account number, "" when none.
	VirtualAccount string
	// BankAccountID is the account the checkout page asks the payer to pay into.
	BankAccountID int64
	PaidAmount    int64 // cumulative amount_in of matched transfers
	// RefundedAmount is what refunds of the order hold or have sent back
	// (docs/api-v2.md, Refunds): pending_approval, pending, processing and
	// succeeded ones (HoldingRefundStatuses).
	RefundedAmount int64
	// CustomData is the merchant's custom_data as a JSON array (text).
	CustomData string
	// CustomDataSigned is false when the checkout form carried custom_data
	// its signature did not cover (docs/api.md, Payment gateway): the payer
	// may have written it. The IPN says so (custom_data_signed).
	CustomDataSigned      bool
	UserAgent, IPAddress  string
	SuccessURL, ErrorURL  string
	CancelURL             string
	PaymentMethod         string
	CreatedAt, UpdatedAt  time.Time
	PaidAt                time.Time // zero until captured
	PaidTransactionID     int64     // the transfer that completed the payment
	CancelledAt, VoidedAt time.Time
	// Buyer is whom the order's invoice is for (API v2; zero when none).
	Buyer Buyer
	// ExpiresAt is when a pending order expires (API v2; zero: never, as
	// v1 checkout orders); ExpiredAt when the maintenance loop expired it
	// (ExpireOrder).
	ExpiresAt, ExpiredAt time.Time
}

// OrderFilter selects a company's orders (spec §4.6; docs/api.md, Payment
// gateway; docs/design.md, D6).
type OrderFilter struct {
	Query  string // q: case-insensitive substring of invoice number, order id, description, customer id, payment code
	Status string
	// V2Status filters by recon.Order.V2Status (GET /v2/orders status).
	V2Status      string
	CustomerID    string
	CreatedOn     string // YYYY-MM-DD, one whole day
	From, To      string // YYYY-MM-DD, inclusive
	Ascending     bool   // sort created_at:asc
	Page, PerPage int
	// Location is the time zone of the day filters (nil: UTC).
	Location *time.Location
}

// ReconciliationReport counts a company's incoming transactions by match
// outcome over a date range, with the unmatched and underpaid ones listed.
type ReconciliationReport struct {
	From, To  string
	Counts    map[string]int64
	Amounts   map[string]int64
	Unmatched []*Transaction
	Underpaid []*MatchDecision
}

// OrderStore stores payment orders.
type OrderStore interface {
	// CreateOrder stores o (status awaiting payment) and sets its ID and
	// times. An invoice number the company already used is ECONFLICT.
	CreateOrder(ctx context.Context, o *Order) error
	// PaymentCodesInUse counts the company's orders (of any status: a code
	// is never reused) whose payment code is prefix followed by n characters,
	// and returns those codes too when there are at most list of them.
	PaymentCodesInUse(ctx context.Context, tenant TenantID, prefix string, n, list int) (int64, []string, error)
	// Order returns the company's order with the invoice number, or ENOTFOUND.
	Order(ctx context.Context, tenant TenantID, invoiceNumber string) (*Order, error)
	// Orders returns one page of the company's orders and the total.
	Orders(ctx context.Context, tenant TenantID, f OrderFilter) ([]*Order, int64, error)
	// CancelOrder cancels an unpaid order (no notification). A paid order is ECONFLICT.
	CancelOrder(ctx context.Context, tenant TenantID, invoiceNumber string, now time.Time) (*Order, error)
	// VoidOrder voids a paid order: CANCELLED, and a TRANSACTION_VOID
	// notification enqueued in the same database transaction. An unpaid one is ECONFLICT.
	VoidOrder(ctx context.Context, tenant TenantID, invoiceNumber string, now time.Time, notify func(*Order) (*Delivery, error)) (*Order, error)
	// MatchDecisions lists the decisions about the order's or the
	// transaction's payments (orderID or transactionID non-zero).
	MatchDecisions(ctx context.Context, tenant TenantID, orderID, transactionID int64) ([]*MatchDecision, error)
	// Reconciliation builds the report for the date range (inclusive days).
	Reconciliation(ctx context.Context, tenant TenantID, from, to string) (*ReconciliationReport, error)
}
