package apiv2

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"recon"
	"recon/refunds"
	"recon/web"
)

// Refunds (docs/api-v2.md, Refunds): requested by order or by transaction
// (the idempotency key required, and kept as long as the refund), read,
// listed, approved, rejected and cancelled, all through refunds.Service.

func (h *Handler) refundRoutes(r *routes) {
	r.add("POST /v2/orders/{id}/refund", h.refundOrder, recon.ScopeRefundWrite, recon.ActionRequestRefunds, KeyRequired)
	r.add("POST /v2/transactions/{id}/refund", h.refundTransaction, recon.ScopeRefundWrite, recon.ActionRequestRefunds, KeyRequired)
	r.add("GET /v2/refunds", h.listRefunds, recon.ScopeRefundRead, recon.ActionReadRefunds, NoKey)
	r.add("GET /v2/refunds/{id}", h.showRefund, recon.ScopeRefundRead, recon.ActionReadRefunds, NoKey)
	r.add("POST /v2/refunds/{id}/cancel", h.cancelRefund, recon.ScopeRefundWrite, recon.ActionRequestRefunds, KeyOptional)
	r.add("POST /v2/refunds/{id}/approve", h.approveRefund, recon.ScopeRefundWrite, recon.ActionApproveRefunds, KeyOptional)
	r.add("POST /v2/refunds/{id}/reject", h.rejectRefund, recon.ScopeRefundWrite, recon.ActionApproveRefunds, KeyOptional)
}

// RefundStore is what the refund routes need of storage: the refunds
// service's (refunds.Store), and an order by its v2 id.
type RefundStore interface {
	refunds.Store
	OrderByPublicID(ctx context.Context, tenant recon.TenantID, id string) (*recon.Order, error)
	// AppendAudit records the refunds' changes in the audit log
	// (docs/dashboard.md, Audit log).
	AppendAudit(ctx context.Context, e *recon.AuditEntry) error
}

// refundsService is the configured service, or one over the store with
// no payout connector.
func (h *Handler) refundsService() *refunds.Service {
	if h.cfg.Refunds != nil {
		return h.cfg.Refunds
	}
	return &refunds.Service{Store: h.cfg.Store, Clock: h.cfg.Clock, Location: h.cfg.Location}
}

// refundBody is the body of POST /v2/orders/{id}/refund and
// /v2/transactions/{id}/refund.
type refundBody struct {
	Amount   *int64 `json:"amount"`
	Reason   string `json:"reason"`
	Receiver *struct {
		BankBIN       string `json:"bank_bin"`
		AccountNumber string `json:"account_number"`
		AccountName   string `json:"account_name"`
	} `json:"receiver"`
}

func (b *refundBody) request() (recon.RefundRequest, error) {
	in := recon.RefundRequest{Reason: b.Reason}
	if b.Amount != nil {
		if *b.Amount < 1 || *b.Amount > recon.MaxAmount {
			return in, recon.FieldError("amount", "amount must be a whole number of VND from 1 to %d (leave it out to refund everything refundable)", int64(recon.MaxAmount))
		}
		in.Amount = *b.Amount
	}
	if b.Receiver != nil {
		in.Receiver = recon.RefundReceiver{BankBIN: b.Receiver.BankBIN, AccountNumber: b.Receiver.AccountNumber, AccountName: b.Receiver.AccountName}
		if !in.Receiver.Known() {
			return in, recon.FieldError("receiver", "receiver needs bank_bin, account_number and account_name (leave it out when the bank data says who paid)")
		}
	}
	if strings.TrimSpace(in.Reason) == "" {
		return in, recon.FieldError("reason", "reason is required: say why the money goes back")
	}
	return in, nil
}

func (h *Handler) refundOrder(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.requestRefund(r, c, func(in *recon.RefundRequest) error {
		id := r.PathValue("id")
		if !recon.ValidXID(id) {
			return recon.Errorf(recon.ENOTFOUND, "order %s not found", id)
		}
		o, err := h.cfg.Store.OrderByPublicID(r.Context(), c.Tenant, id)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return recon.Errorf(recon.ENOTFOUND, "order %s not found", id)
		}
		if err != nil {
			return err
		}
		in.OrderID = o.ID
		return nil
	})
}

func (h *Handler) refundTransaction(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.requestRefund(r, c, func(in *recon.RefundRequest) error {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			return recon.Errorf(recon.ENOTFOUND, "transaction %s not found", r.PathValue("id"))
		}
		in.TransactionID = id
		return nil
	})
}

// requestRefund reads and checks the body of both refund routes, lets
// target name what is refunded (the path's order or transaction), and
// requests the refund.
func (h *Handler) requestRefund(r *http.Request, c *recon.Caller, target func(in *recon.RefundRequest) error) (*Answer, error) {
	var b refundBody
	if err := decode(r, &b); err != nil {
		return nil, err
	}
	in, err := b.request()
	if err != nil {
		return nil, err
	}
	if err := target(&in); err != nil {
		return nil, err
	}
	res, err := h.refundsService().Request(r.Context(), c, in)
	if err == nil {
		err = h.auditRefund(r, c, recon.AuditRefundRequest, res.Refund, recon.AuditRefundRequested(res.Refund))
	}
	if err != nil {
		return nil, err
	}
	a := created(RefundJSON(res, h.cfg.Location))
	a.KeepKey = true // the key lives as long as the refund (docs/api-v2.md, Idempotency)
	return a, nil
}

func (h *Handler) showRefund(r *http.Request, c *recon.Caller) (*Answer, error) {
	res, err := h.refundsService().Get(r.Context(), c, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return ok(RefundJSON(res, h.cfg.Location)), nil
}

// refundParams are GET /v2/refunds' query parameters.
var refundParams = []string{"order_id", "transaction_id", "status", "from_date", "to_date", "page", "per_page"}

func (h *Handler) listRefunds(r *http.Request, c *recon.Caller) (*Answer, error) {
	q := r.URL.Query()
	if err := recon.CheckParams(q, refundParams); err != nil {
		return nil, err
	}
	p, err := pageOf(r)
	if err != nil {
		return nil, err
	}
	f := recon.RefundFilter{Page: p.Page, PerPage: p.PerPage, Status: q.Get("status")}
	if err := recon.ParseDateRange(q, &f.From, &f.To); err != nil {
		return nil, err
	}
	if q.Has("status") && !slices.Contains(recon.RefundStatuses, f.Status) {
		return nil, recon.FieldError("status", "status must be one of %s", strings.Join(recon.RefundStatuses, ", "))
	}
	if q.Has("transaction_id") {
		id, err := strconv.ParseInt(q.Get("transaction_id"), 10, 64)
		if err != nil || id < 1 {
			return nil, recon.FieldError("transaction_id", "transaction_id must be a transaction's id, a positive integer")
		}
		f.TransactionID = id
	}
	if q.Has("order_id") {
		id := q.Get("order_id")
		if !recon.ValidXID(id) {
			return nil, recon.FieldError("order_id", "order_id must be an order's id (a UUID)")
		}
		o, err := h.cfg.Store.OrderByPublicID(r.Context(), c.Tenant, id)
		if recon.ErrorCode(err) == recon.ENOTFOUND {
			return paged([]any{}, p, 0), nil // no such order of this tenant: no refunds
		}
		if err != nil {
			return nil, err
		}
		f.OrderID = o.ID
	}
	list, total, err := h.refundsService().List(recon.Listing(r.Context()), c, f)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(list))
	for i, res := range list {
		out[i] = RefundJSON(res, h.cfg.Location)
	}
	return paged(out, p, total), nil
}

func (h *Handler) cancelRefund(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.changeRefund(r, c, recon.AuditRefundCancel, h.refundsService().Cancel)
}

func (h *Handler) approveRefund(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.changeRefund(r, c, recon.AuditRefundApprove, h.refundsService().Approve)
}

func (h *Handler) rejectRefund(r *http.Request, c *recon.Caller) (*Answer, error) {
	return h.changeRefund(r, c, recon.AuditRefundReject, h.refundsService().Reject)
}

func (h *Handler) changeRefund(r *http.Request, c *recon.Caller, action string, fn func(context.Context, *recon.Caller, string) (*refunds.Result, error)) (*Answer, error) {
	if err := emptyOrObject(r, &struct{}{}); err != nil { // the state changes take no body (or {})
		return nil, err
	}
	res, err := fn(r.Context(), c, r.PathValue("id"))
	if err == nil {
		err = h.auditRefund(r, c, action, res.Refund, []recon.AuditChange{{Field: "status", After: res.Refund.Status}, {Field: "amount", After: strconv.FormatInt(res.Refund.Amount, 10)}})
	}
	if err != nil {
		return nil, err
	}
	return ok(RefundJSON(res, h.cfg.Location)), nil
}

// optTimeIn renders a time as API v2 does (orders' timeText): RFC 3339 in
// the business time zone loc, null when unset.
func optTimeIn(t time.Time, loc *time.Location) any {
	if t.IsZero() {
		return nil
	}
	return timeIn(t, loc)
}

func actorJSON(a recon.RefundActor) any {
	if a.IsZero() {
		return nil
	}
	m := map[string]any{"user_id": nil, "email": nil, "client_id": nil}
	if a.UserID != 0 {
		m["user_id"], m["email"] = a.UserID, a.Email
	}
	if a.ClientID != "" {
		m["client_id"] = a.ClientID
	}
	return m
}

func receiverJSON(r recon.RefundReceiver) map[string]any {
	return map[string]any{"bank_bin": r.BankBIN, "account_number": r.AccountNumber, "account_name": r.AccountName}
}

// RefundJSON is a refund as API v2 shows it (docs/api-v2.md, Refunds), and
// the CLI prints it, its times in the business time zone loc as an order's.
func RefundJSON(res *refunds.Result, loc *time.Location) map[string]any {
	r := res.Refund
	m := map[string]any{
		"id": r.ID, "order_id": nil, "transaction_id": nil, "amount": r.Amount, "reason": r.Reason,
		"receiver": receiverJSON(r.Receiver), "reference": r.Reference, "status": r.Status, "failure_reason": nil,
		"requested_by": actorJSON(r.RequestedBy), "approved_by": nil, "rejected_by": nil,
		"settled_transaction_id": nil, "bank_account_id": r.BankAccountID, "allocations": []any{}, "instructions": nil,
		"created_at": optTimeIn(r.CreatedAt, loc), "updated_at": optTimeIn(r.UpdatedAt, loc),
	}
	if r.OrderPublicID != "" {
		m["order_id"] = r.OrderPublicID
	}
	if r.TransactionID != 0 {
		m["transaction_id"] = r.TransactionID
	}
	if r.FailureReason != "" {
		m["failure_reason"] = r.FailureReason
	}
	if r.Status == recon.RefundRejected {
		m["rejected_by"] = actorJSON(r.DecidedBy)
	} else {
		m["approved_by"] = actorJSON(r.DecidedBy)
	}
	if r.SettledTransactionID != 0 {
		m["settled_transaction_id"] = r.SettledTransactionID
	}
	alloc := make([]any, len(r.Allocations))
	for i, a := range r.Allocations {
		alloc[i] = map[string]any{"transaction_id": a.TransactionID, "amount": a.Amount}
	}
	m["allocations"] = alloc
	if in := res.Instructions; in != nil {
		qr := map[string]any{"payload": nil}
		if in.QR != "" {
			qr["payload"] = in.QR
		}
		m["instructions"] = map[string]any{"bank_account_id": in.BankAccountID, "receiver": receiverJSON(in.Receiver),
			"amount": in.Amount, "memo": in.Memo, "qr": qr}
	}
	return m
}

// auditRefund records a refund's change in the audit log, right after it
// (docs/dashboard.md, Audit log): the caller, its address and user agent.
func (h *Handler) auditRefund(r *http.Request, c *recon.Caller, action string, rf *recon.Refund, changes []recon.AuditChange) error {
	return h.cfg.Store.AppendAudit(r.Context(), &recon.AuditEntry{Tenant: c.Tenant, At: h.cfg.Clock.Now(), Action: action, Object: "refund " + rf.ID,
		Changes: changes, Actor: recon.AuditActorOf(c, recon.AuditViaAPI, web.RemoteIP(r), r.UserAgent())})
}
