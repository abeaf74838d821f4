package refunds

import (
	"context"
	"time"

	"recon"
)

// SandboxPayout is the name of the sandbox payout connector (Refund.Payout).
const SandboxPayout = "sandbox"

// SandboxFailures are the receiver account numbers the sandbox payout
// connector refuses, with the failure reason each gets (docs/api-v2.md, How
// a refund settles): a merchant's test of REFUND_FAILED.
var SandboxFailures = map[string]string{
	"000000000001": "the receiving account does not exist",
	"000000000002": "the receiving account is closed",
}

// DefaultSandboxDelay is the sandbox's "moment": how long after it took a
// refund its money leaves.
const DefaultSandboxDelay = 5 * time.Second

// SandboxStore is the storage the sandbox connector needs.
type SandboxStore interface {
	// recon.RefundStore's:
	PayoutsDue(ctx context.Context, payout string, before time.Time, limit int) ([]*recon.Refund, []recon.TenantID, error)
	ChangeRefund(ctx context.Context, tenant recon.TenantID, id string, ch recon.RefundChange, now time.Time) (*recon.Refund, error)
	// recon.IngestStore's:
	recon.IngestStore
}

// Sandbox is the sandbox payout connector: it takes every refund (Send),
// and a moment later (Delay after it took it, by Clock) Run sends it as a
// bank would: the outgoing transfer, with the refund's reference in its
// memo, arrives through the ingestion pipeline every way in shares
// (recon.Ingest), which settles the refund; a refund to a receiver account
// of SandboxFailures fails instead. Run is driven from outside (the
// server's loop, a test), never by sleeping here. Several nodes may run it
// at once: the transfer's bank reference is the refund's ("RF" + reference:
// SettlementInput), so ingestion stores it once and settles once, and a
// failure is a state change under the refund's lock, which only one node
// makes.
type Sandbox struct {
	Store SandboxStore
	Clock recon.Clock
	// Location is the business time zone of the transfers' dates (default UTC).
	Location *time.Location
	// Delay is the moment (default DefaultSandboxDelay).
	Delay time.Duration
}

// Name implements recon.PayoutConnector.
func (s *Sandbox) Name() string { return SandboxPayout }

// Send implements recon.PayoutConnector: the sandbox takes every refund; Run
// sends it.
func (s *Sandbox) Send(context.Context, recon.TenantID, *recon.Refund) error { return nil }

// MaxSandboxBatch bounds the payouts one Run sends.
const MaxSandboxBatch = 100

// Run sends the payouts due (taken at least Delay ago) and returns how many
// it handled. An error stops it; what was sent stays sent.
func (s *Sandbox) Run(ctx context.Context) (int, error) {
	now := time.Now()
	if s.Clock != nil {
		now = s.Clock.Now()
	}
	delay := s.Delay
	if delay <= 0 {
		delay = DefaultSandboxDelay
	}
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	due, tenants, err := s.Store.PayoutsDue(ctx, SandboxPayout, now.Add(-delay), MaxSandboxBatch)
	if err != nil {
		return 0, err
	}
	for i, r := range due {
		if reason, fails := SandboxFailures[r.Receiver.AccountNumber]; fails {
			_, err := s.Store.ChangeRefund(ctx, tenants[i], r.ID, recon.RefundChange{Event: recon.RefundFail, Reason: reason}, now.In(loc)) // REFUND_FAILED's date
			if err != nil && recon.RefundRule(err) != recon.RuleInvalidState {                                                              // another node failed it first
				return i, err
			}
			continue
		}
		if _, err := recon.Ingest(ctx, s.Store, tenants[i], now, []recon.TransactionInput{SettlementInput(r, now.In(loc))}); err != nil {
			return i, err
		}
	}
	return len(due), nil
}
