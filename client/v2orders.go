package client

import (
	"context"
	"iter"
	"net/url"
)

// V2Buyer is whom an order's invoice is for (docs/api-v2.md, Orders).
type V2Buyer struct {
	Name      string `json:"name,omitempty"`
	LegalName string `json:"legal_name,omitempty"`
	TaxCode   string `json:"tax_code,omitempty"`
	Address   string `json:"address,omitempty"`
	Email     string `json:"email,omitempty"`
	Phone     string `json:"phone,omitempty"`
}

// V2QR is a virtual account's VietQR: its EMVCo payload, which any QR
// library renders.
type V2QR struct {
	Payload  string  `json:"payload"`
	ImageURL *string `json:"image_url"`
}

// V2VirtualAccount is a virtual account of an order (docs/api-v2.md,
// Virtual accounts): a bank number to transfer to, or a memo code to write.
type V2VirtualAccount struct {
	VANumber      string `json:"va_number"`
	OrderID       string `json:"order_id"`
	Kind          string `json:"kind"` // bank or memo
	HolderName    string `json:"holder_name"`
	BankAccountID int64  `json:"bank_account_id"`
	// Amount is what the account asks for; nil when open.
	Amount     *int64 `json:"amount"`
	AmountMode string `json:"amount_mode"` // exact, partial or open
	Status     string `json:"status"`      // active, paid, expired or cancelled
	ExpiresAt  string `json:"expires_at"`
	CreatedAt  string `json:"created_at"`
	QR         *V2QR  `json:"qr"` // nil when the bank has no known NAPAS BIN
}

// V2Order is an order of API v2 (a v1 checkout order too).
type V2Order struct {
	ID                 string             `json:"id"`
	OrderInvoiceNumber string             `json:"order_invoice_number"`
	Amount             int64              `json:"amount"`
	PaidAmount         int64              `json:"paid_amount"`
	RefundedAmount     int64              `json:"refunded_amount"`
	Status             string             `json:"status"` // pending, partially_paid, paid, cancelled or expired
	CustomerID         *string            `json:"customer_id"`
	Description        *string            `json:"description"`
	Buyer              *V2Buyer           `json:"buyer"`
	BankAccountID      *int64             `json:"bank_account_id"`
	VirtualAccounts    []V2VirtualAccount `json:"virtual_accounts"`
	CreatedAt          string             `json:"created_at"`
	PaidAt             *string            `json:"paid_at"`
	ExpiresAt          *string            `json:"expires_at"`
}

// V2VAOptions asks for another virtual account of an order
// (AddVirtualAccount): with an Amount and no AmountMode, partial.
type V2VAOptions struct {
	AmountMode string `json:"amount_mode,omitempty"` // exact (default), partial or open
	HolderName string `json:"holder_name,omitempty"`
	Amount     *int64 `json:"amount,omitempty"`
	ExpiresIn  *int64 `json:"expires_in,omitempty"` // seconds
}

// V2OrderInput is POST /v2/orders' body.
type V2OrderInput struct {
	OrderInvoiceNumber string     `json:"order_invoice_number"`
	Amount             int64      `json:"amount"`
	BankAccountID      int64      `json:"bank_account_id"`
	Description        string     `json:"description,omitempty"`
	CustomerID         string     `json:"customer_id,omitempty"`
	Buyer              *V2Buyer   `json:"buyer,omitempty"`
	ExpiresIn          *int64     `json:"expires_in,omitempty"` // seconds, default 86400
	VA                 *V2FirstVA `json:"va,omitempty"`
}

// V2FirstVA asks for an order's first virtual account (V2OrderInput.VA).
type V2FirstVA struct {
	AmountMode string `json:"amount_mode,omitempty"` // exact (default), partial or open
	HolderName string `json:"holder_name,omitempty"`
}

// V2OrderFilter selects orders (GET /v2/orders); zero values do not filter.
type V2OrderFilter struct {
	Status     string // pending, partially_paid, paid, cancelled, expired
	CustomerID string
	Q          string
	FromDate   string // YYYY-MM-DD
	ToDate     string
	PerPage    int // 0: the server's default (20)
}

func (f V2OrderFilter) query(page int) url.Values {
	return v2Filter(map[string]string{"status": f.Status, "customer_id": f.CustomerID, "q": f.Q, "from_date": f.FromDate, "to_date": f.ToDate}, page, 1, f.PerPage)
}

// V2VAFilter selects virtual accounts (GET /v2/virtual-accounts).
type V2VAFilter struct {
	Status  string // active, paid, expired, cancelled
	OrderID string
	PerPage int
}

// CreateOrder creates an order with its first virtual account: POST
// /v2/orders (scope order:write). Pass WithIdempotencyKey to retry safely.
func (v *V2) CreateOrder(ctx context.Context, in V2OrderInput, opts ...V2CallOption) (*V2Order, error) {
	var out V2Order
	if _, err := v.call(ctx, "POST", "/v2/orders", nil, in, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetOrder reads an order by its id: GET /v2/orders/{id} (scope order:read).
func (v *V2) GetOrder(ctx context.Context, id string) (*V2Order, error) {
	var out V2Order
	if _, err := v.call(ctx, "GET", "/v2/orders/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListOrders reads one page (from 1) of orders, newest first: GET
// /v2/orders (scope order:read).
func (v *V2) ListOrders(ctx context.Context, f V2OrderFilter, page int) ([]V2Order, V2PageMeta, error) {
	return v2List[V2Order](ctx, v, "/v2/orders", f.query(page))
}

// Orders iterates over every order of the filter, page after page.
func (v *V2) Orders(ctx context.Context, f V2OrderFilter) iter.Seq2[V2Order, error] {
	return v2Pages(ctx, func(ctx context.Context, page int) ([]V2Order, V2PageMeta, error) { return v.ListOrders(ctx, f, page) })
}

// CancelOrder cancels a pending or partially paid order and its active
// accounts: POST /v2/orders/{id}/cancel (scope order:write); another state is
// a 422 invalid_state.
func (v *V2) CancelOrder(ctx context.Context, id string, opts ...V2CallOption) (*V2Order, error) {
	var out V2Order
	if _, err := v.call(ctx, "POST", "/v2/orders/"+url.PathEscape(id)+"/cancel", nil, struct{}{}, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// AddVirtualAccount adds an account to a pending or partially paid order:
// POST /v2/orders/{id}/virtual-accounts (scope order:write).
func (v *V2) AddVirtualAccount(ctx context.Context, orderID string, in V2VAOptions, opts ...V2CallOption) (*V2VirtualAccount, error) {
	var out V2VirtualAccount
	if _, err := v.call(ctx, "POST", "/v2/orders/"+url.PathEscape(orderID)+"/virtual-accounts", nil, in, &out, opts...); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelVirtualAccount cancels an active account of the order: DELETE
// /v2/orders/{id}/virtual-accounts/{va_number} (scope order:write).
func (v *V2) CancelVirtualAccount(ctx context.Context, orderID, number string) (*V2VirtualAccount, error) {
	var out V2VirtualAccount
	if _, err := v.call(ctx, "DELETE", "/v2/orders/"+url.PathEscape(orderID)+"/virtual-accounts/"+url.PathEscape(number), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListVirtualAccounts reads one page (from 1) of accounts, newest first: GET
// /v2/virtual-accounts (scope order:read).
func (v *V2) ListVirtualAccounts(ctx context.Context, f V2VAFilter, page int) ([]V2VirtualAccount, V2PageMeta, error) {
	return v2List[V2VirtualAccount](ctx, v, "/v2/virtual-accounts", v2Filter(map[string]string{"status": f.Status, "order_id": f.OrderID}, page, 1, f.PerPage))
}

// VirtualAccounts iterates over every account of the filter, page after page.
func (v *V2) VirtualAccounts(ctx context.Context, f V2VAFilter) iter.Seq2[V2VirtualAccount, error] {
	return v2Pages(ctx, func(ctx context.Context, page int) ([]V2VirtualAccount, V2PageMeta, error) {
		return v.ListVirtualAccounts(ctx, f, page)
	})
}
