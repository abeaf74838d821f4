// Package refunds is the service of refunds (docs/api-v2.md, Refunds; How
// a refund settles): requesting one for an order or a transaction,
// approving, rejecting and cancelling it, reading and listing them, the
// company's approval threshold, handing a refund to a payout connector, and
// the sandbox payout connector (Sandbox). API v2, the dashboard and the CLI
// call it; it speaks no HTTP (ARCHITECTURE.md, "The dependency rule":
// services). Settlement is not here: ingestion settles a refund when its
// outgoing transfer arrives, by any way in (sqlstore, IngestTransactions).
package refunds

import (
	"context"
	"time"

	"recon"
)

// Store is the storage the service needs.
type Store interface {
	// recon.RefundStore's:
	CreateRefund(ctx context.Context, tenant recon.TenantID, in *recon.RefundRequest, now time.Time) (*recon.Refund, error)
	Refund(ctx context.Context, tenant recon.TenantID, id string) (*recon.Refund, error)
	Refunds(ctx context.Context, tenant recon.TenantID, f recon.RefundFilter) ([]*recon.Refund, int64, error)
	ChangeRefund(ctx context.Context, tenant recon.TenantID, id string, ch recon.RefundChange, now time.Time) (*recon.Refund, error)
	Refundable(ctx context.Context, tenant recon.TenantID, orderID, transactionID int64) (int64, error)
	RefundApprovalThreshold(ctx context.Context, tenant recon.TenantID) (int64, error)
	SetRefundApprovalThreshold(ctx context.Context, tenant recon.TenantID, vnd int64) error
	// recon.IngestStore's (SimulateSettlement):
	recon.IngestStore
}

// Service runs refunds.
type Service struct {
	Store Store
	Clock recon.Clock
	// Location is the business time zone: the date of a simulated
	// outgoing transfer (default UTC).
	Location *time.Location
	// Live and Test are the payout connectors of live and test tenants;
	// nil: none, the merchant sends the money by hand (Instructions). A
	// server gives test tenants the sandbox connector (Sandbox); live ones
	// have none until a bank offers payouts.
	Live, Test recon.PayoutConnector
}

// now is the business time in the business time zone: the moment a
// change happens, which a REFUND_FAILED notification carries as its date.
func (s *Service) now() time.Time {
	now := time.Now()
	if s.Clock != nil {
		now = s.Clock.Now()
	}
	if s.Location != nil {
		now = now.In(s.Location)
	}
	return now
}

// connector is the tenant's payout connector, nil when none.
func (s *Service) connector(tenant recon.TenantID) recon.PayoutConnector {
	if tenant.Live() {
		return s.Live
	}
	return s.Test
}

// Result is a refund as every surface shows it: the refund, and what the
// merchant sends when nobody else does (nil otherwise: recon.InstructionsOf).
type Result struct {
	Refund       *recon.Refund
	Instructions *recon.RefundInstructions
}

func result(r *recon.Refund) *Result {
	return &Result{Refund: r, Instructions: recon.InstructionsOf(r)}
}

// Request asks for a refund for the caller's tenant: in.OrderID (the
// internal id; API v2 maps an order's public id onto it) or
// in.TransactionID, with in.By set from the caller. The rules are
// recon.NewRefund's, checked by the store under lock. A pending refund
// goes to the tenant's payout connector at once (Dispatch); one at or
// above the company's threshold waits for approval.
func (s *Service) Request(ctx context.Context, c *recon.Caller, in recon.RefundRequest) (*Result, error) {
	if err := c.Authorize(recon.ActionRequestRefunds); err != nil {
		return nil, err
	}
	in.By = recon.ActorOf(c)
	r, err := s.Store.CreateRefund(ctx, c.Tenant, &in, s.now())
	if err != nil {
		return nil, err
	}
	res, err := s.Dispatch(ctx, c.Tenant, r)
	if err != nil {
		// The refund exists: answer it as stored (pending) rather than
		// with an error, which would free the request's idempotency key
		// and let a retry request a second refund. It waits to be sent
		// or cancelled like one made without a connector.
		return result(r), nil
	}
	return res, nil
}

// Dispatch hands a pending refund to the tenant's payout connector: the
// refund becomes processing, then the connector takes it; a connector that
// refuses fails it (REFUND_FAILED, its amount freed). Without a connector,
// or for a refund not pending, it returns the refund as it is.
func (s *Service) Dispatch(ctx context.Context, tenant recon.TenantID, r *recon.Refund) (*Result, error) {
	pc := s.connector(tenant)
	if pc == nil || r.Status != recon.RefundPending {
		return result(r), nil
	}
	sent, err := s.Store.ChangeRefund(ctx, tenant, r.ID, recon.RefundChange{Event: recon.RefundSend, Payout: pc.Name()}, s.now())
	if recon.RefundRule(err) == recon.RuleInvalidState {
		// Cancelled or settled meanwhile: show it as it is now.
		now, err := s.Store.Refund(ctx, tenant, r.ID)
		if err != nil {
			return nil, err
		}
		return result(now), nil
	}
	if err != nil {
		return nil, err
	}
	if err := pc.Send(ctx, tenant, sent); err != nil {
		if sent, err = s.Fail(ctx, tenant, sent.ID, recon.ErrorMessage(err)); err != nil {
			return nil, err
		}
	}
	return result(sent), nil
}

// Approve lets a refund waiting for approval go, by another Admin or
// SuperAdmin than its requester (four eyes: recon.NextRefund), and
// dispatches it.
func (s *Service) Approve(ctx context.Context, c *recon.Caller, id string) (*Result, error) {
	if err := c.Authorize(recon.ActionApproveRefunds); err != nil {
		return nil, err
	}
	r, err := s.Store.ChangeRefund(ctx, c.Tenant, id, recon.RefundChange{Event: recon.RefundApprove, By: recon.ActorOf(c)}, s.now())
	if err != nil {
		return nil, err
	}
	return s.Dispatch(ctx, c.Tenant, r)
}

// Reject refuses a refund waiting for approval (four eyes, as Approve); its
// amount is refundable again.
func (s *Service) Reject(ctx context.Context, c *recon.Caller, id string) (*Result, error) {
	if err := c.Authorize(recon.ActionApproveRefunds); err != nil {
		return nil, err
	}
	r, err := s.Store.ChangeRefund(ctx, c.Tenant, id, recon.RefundChange{Event: recon.RefundReject, By: recon.ActorOf(c)}, s.now())
	if err != nil {
		return nil, err
	}
	return result(r), nil
}

// Cancel withdraws a refund whose money has not left (pending_approval or
// pending); its amount is refundable again. Its transfer arriving later is
// an exception for a person (docs/api-v2.md, How a refund settles).
func (s *Service) Cancel(ctx context.Context, c *recon.Caller, id string) (*Result, error) {
	if err := c.Authorize(recon.ActionRequestRefunds); err != nil {
		return nil, err
	}
	r, err := s.Store.ChangeRefund(ctx, c.Tenant, id, recon.RefundChange{Event: recon.RefundCancel}, s.now())
	if err != nil {
		return nil, err
	}
	return result(r), nil
}

// Get returns one of the caller's tenant's refunds.
func (s *Service) Get(ctx context.Context, c *recon.Caller, id string) (*Result, error) {
	if err := c.Authorize(recon.ActionReadRefunds); err != nil {
		return nil, err
	}
	r, err := s.Store.Refund(ctx, c.Tenant, id)
	if err != nil {
		return nil, err
	}
	return result(r), nil
}

// List returns one page of the caller's tenant's refunds, newest first,
// and the total.
func (s *Service) List(ctx context.Context, c *recon.Caller, f recon.RefundFilter) ([]*Result, int64, error) {
	if err := c.Authorize(recon.ActionReadRefunds); err != nil {
		return nil, 0, err
	}
	if f.Location == nil {
		f.Location = s.Location
	}
	list, total, err := s.Store.Refunds(ctx, c.Tenant, f)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Result, len(list))
	for i, r := range list {
		out[i] = result(r)
	}
	return out, total, nil
}

// Refundable returns what may still be refunded of an order (orderID) or a
// transaction (transactionID) of the caller's tenant.
func (s *Service) Refundable(ctx context.Context, c *recon.Caller, orderID, transactionID int64) (int64, error) {
	if err := c.Authorize(recon.ActionReadRefunds); err != nil {
		return 0, err
	}
	return s.Store.Refundable(ctx, c.Tenant, orderID, transactionID)
}

// Threshold returns the company's refund approval threshold in VND, 0 when
// none.
func (s *Service) Threshold(ctx context.Context, c *recon.Caller) (int64, error) {
	if err := c.Authorize(recon.ActionReadRefunds); err != nil {
		return 0, err
	}
	return s.Store.RefundApprovalThreshold(ctx, c.Tenant)
}

// SetThreshold sets the company's refund approval threshold (0: none): a
// company setting, for who manages the company.
func (s *Service) SetThreshold(ctx context.Context, c *recon.Caller, vnd int64) error {
	if err := c.Authorize(recon.ActionManageCompany); err != nil {
		return err
	}
	return s.Store.SetRefundApprovalThreshold(ctx, c.Tenant, vnd)
}

// Fail records that the payout connector could not send a processing
// refund: failed, with the reason, its amount refundable again, and a
// REFUND_FAILED IPN for a subscribing target.
func (s *Service) Fail(ctx context.Context, tenant recon.TenantID, id, reason string) (*recon.Refund, error) {
	return s.Store.ChangeRefund(ctx, tenant, id, recon.RefundChange{Event: recon.RefundFail, Reason: reason}, s.now())
}

// SettlementInput is the outgoing transfer of a refund as its bank reports
// it: from the refund's account, of its amount, the reference in the memo.
// The bank reference is "RF" and the refund's reference, so that the same
// transfer reported twice is stored once.
func SettlementInput(r *recon.Refund, at time.Time) recon.TransactionInput {
	return recon.TransactionInput{BankAccountID: r.BankAccountID, TransactionDate: at, AmountOut: r.Amount,
		Content: "HOAN TIEN " + r.Reference, ReferenceNumber: "RF" + r.Reference}
}

// SimulateSettlement plays the bank (`recon simulate refund-settlement`):
// the refund's outgoing transfer arrives through the ingestion pipeline
// every way in shares (recon.Ingest), which settles the refund when it is
// pending or processing, and queues an exception otherwise. It returns the
// refund after it and the transfer's result.
func (s *Service) SimulateSettlement(ctx context.Context, tenant recon.TenantID, id string) (*recon.Refund, recon.IngestResult, error) {
	r, err := s.Store.Refund(ctx, tenant, id)
	if err != nil {
		return nil, recon.IngestResult{}, err
	}
	now := s.now()
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	res, err := recon.Ingest(ctx, s.Store, tenant, now, []recon.TransactionInput{SettlementInput(r, now.In(loc))})
	if err != nil {
		return nil, recon.IngestResult{}, err
	}
	r, err = s.Store.Refund(ctx, tenant, id)
	if err != nil {
		return nil, recon.IngestResult{}, err
	}
	return r, res[0], nil
}
