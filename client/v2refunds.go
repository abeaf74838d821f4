package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// The error codes of the refund rules (docs/api-v2.md, Refunds): a 422
// *Error's Code. invalid_state is shared with orders.
const (
	CodeAmountExceedsRefundable = "amount_exceeds_refundable" // 422: more than is left to refund
	CodeAlreadyRefunded         = "already_refunded"          // 422: refunds hold everything that came in
	CodeNothingToRefund         = "nothing_to_refund"         // 422: no money came in
	CodeReceiverRequired        = "receiver_required"         // 422: name the payer's account
	CodeRefundInvalidState      = "invalid_state"             // 422: the refund's status does not allow it
)

// Refund statuses (docs/api-v2.md, Refunds).
const (
	RefundPendingApproval = "pending_approval"
	RefundPending         = "pending"
	RefundProcessing      = "processing"
	RefundSucceeded       = "succeeded"
	RefundFailed          = "failed"
	RefundRejected        = "rejected"
	RefundCancelled       = "cancelled"
)

// V2RefundReceiver is the account a refund's money goes to.
type V2RefundReceiver struct {
	BankBIN       string `json:"bank_bin"` // the receiving bank's 6-digit NAPAS BIN
	AccountNumber string `json:"account_number"`
	AccountName   string `json:"account_name"`
}

// V2RefundRequest is the body of a refund request.
type V2RefundRequest struct {
	// Amount in whole VND; nil refunds everything refundable.
	Amount   *int64            `json:"amount,omitempty"`
	Reason   string            `json:"reason"`
	Receiver *V2RefundReceiver `json:"receiver,omitempty"`
}

// V2RefundActor is who requested or decided a refund: a user, or a client
// (a client-credentials token).
type V2RefundActor struct {
	UserID   *int64  `json:"user_id"`
	Email    *string `json:"email"`
	ClientID *string `json:"client_id"`
}

// V2RefundAllocation is the part of a refund drawn on one incoming transaction.
type V2RefundAllocation struct {
	TransactionID int64 `json:"transaction_id"`
	Amount        int64 `json:"amount"`
}

// V2RefundInstructions are what the merchant sends while no payout
// connector sends the refund.
type V2RefundInstructions struct {
	BankAccountID int64            `json:"bank_account_id"`
	Receiver      V2RefundReceiver `json:"receiver"`
	Amount        int64            `json:"amount"`
	Memo          string           `json:"memo"`
	QR            struct {
		Payload *string `json:"payload"` // EMVCo VietQR of the receiver, nil when it does not fit one
	} `json:"qr"`
}

// V2Refund is a refund as API v2 shows it.
type V2Refund struct {
	ID                   string                `json:"id"`
	OrderID              *string               `json:"order_id"`
	TransactionID        *int64                `json:"transaction_id"`
	Amount               int64                 `json:"amount"`
	Reason               string                `json:"reason"`
	Receiver             V2RefundReceiver      `json:"receiver"`
	Reference            string                `json:"reference"` // what the outgoing transfer's memo carries
	Status               string                `json:"status"`
	FailureReason        *string               `json:"failure_reason"`
	RequestedBy          *V2RefundActor        `json:"requested_by"`
	ApprovedBy           *V2RefundActor        `json:"approved_by"`
	RejectedBy           *V2RefundActor        `json:"rejected_by"`
	SettledTransactionID *int64                `json:"settled_transaction_id"`
	BankAccountID        int64                 `json:"bank_account_id"`
	Allocations          []V2RefundAllocation  `json:"allocations"`
	Instructions         *V2RefundInstructions `json:"instructions"`
	CreatedAt            string                `json:"created_at"`
	UpdatedAt            string                `json:"updated_at"`
}

// RefundOrder refunds what the order (its v2 id) was paid, newest
// transfer first: POST /v2/orders/{id}/refund. The server requires an
// idempotency key: pass WithIdempotencyKey, the same for retries.
func (v *V2) RefundOrder(ctx context.Context, orderID string, in V2RefundRequest, opts ...V2CallOption) (*V2Refund, error) {
	var r V2Refund
	if _, err := v.call(ctx, http.MethodPost, "/v2/orders/"+url.PathEscape(orderID)+"/refund", nil, in, &r, opts...); err != nil {
		return nil, err
	}
	return &r, nil
}

// RefundTransaction refunds what an incoming transaction brought: POST
// /v2/transactions/{id}/refund (an idempotency key required, as RefundOrder).
func (v *V2) RefundTransaction(ctx context.Context, transactionID int64, in V2RefundRequest, opts ...V2CallOption) (*V2Refund, error) {
	var r V2Refund
	if _, err := v.call(ctx, http.MethodPost, "/v2/transactions/"+strconv.FormatInt(transactionID, 10)+"/refund", nil, in, &r, opts...); err != nil {
		return nil, err
	}
	return &r, nil
}

// Refund reads one refund: GET /v2/refunds/{id}.
func (v *V2) Refund(ctx context.Context, id string) (*V2Refund, error) {
	var r V2Refund
	if _, err := v.call(ctx, http.MethodGet, "/v2/refunds/"+url.PathEscape(id), nil, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// V2RefundFilter selects refunds; zero values are no filter.
type V2RefundFilter struct {
	OrderID       string // an order's v2 id
	TransactionID int64
	Status        string
	FromDate      string // YYYY-MM-DD
	ToDate        string // YYYY-MM-DD, inclusive
	PerPage       int    // 0: the server's default
}

func (f V2RefundFilter) query(page int) url.Values {
	q := v2Filter(map[string]string{"order_id": f.OrderID, "status": f.Status, "from_date": f.FromDate, "to_date": f.ToDate}, page, 2, f.PerPage)
	if f.TransactionID != 0 {
		q.Set("transaction_id", strconv.FormatInt(f.TransactionID, 10))
	}
	return q
}

// Refunds reads one page of refunds, newest first: GET /v2/refunds.
func (v *V2) Refunds(ctx context.Context, f V2RefundFilter, page int) ([]V2Refund, V2PageMeta, error) {
	return v2List[V2Refund](ctx, v, "/v2/refunds", f.query(page))
}

// AllRefunds iterates over every refund the filter selects, page after page.
func (v *V2) AllRefunds(ctx context.Context, f V2RefundFilter) iter.Seq2[V2Refund, error] {
	return v2Pages(ctx, func(ctx context.Context, page int) ([]V2Refund, V2PageMeta, error) { return v.Refunds(ctx, f, page) })
}

// CancelRefund cancels a refund whose money has not left: POST /v2/refunds/{id}/cancel.
func (v *V2) CancelRefund(ctx context.Context, id string, opts ...V2CallOption) (*V2Refund, error) {
	return v.changeRefund(ctx, id, "cancel", opts)
}

// ApproveRefund approves a refund waiting for approval, as an Admin or
// SuperAdmin other than its requester: POST /v2/refunds/{id}/approve.
func (v *V2) ApproveRefund(ctx context.Context, id string, opts ...V2CallOption) (*V2Refund, error) {
	return v.changeRefund(ctx, id, "approve", opts)
}

// RejectRefund rejects a refund waiting for approval: POST /v2/refunds/{id}/reject.
func (v *V2) RejectRefund(ctx context.Context, id string, opts ...V2CallOption) (*V2Refund, error) {
	return v.changeRefund(ctx, id, "reject", opts)
}

func (v *V2) changeRefund(ctx context.Context, id, action string, opts []V2CallOption) (*V2Refund, error) {
	var r V2Refund
	if _, err := v.call(ctx, http.MethodPost, "/v2/refunds/"+url.PathEscape(id)+"/"+action, nil, struct{}{}, &r, opts...); err != nil {
		return nil, err
	}
	return &r, nil
}
