package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"recon"
	"recon/sqlstore"
)

// A Step is one piece of a node's housekeeping. Every node runs every step
// (there is no leader): a step must be idempotent, and whatever must happen
// once (an expiry, a deletion) the store makes happen once.
type Step struct {
	// Doing names the work in the warning logged when it fails
	// ("deleting expired tokens").
	Doing string
	// Done is the message logged when Run reports a change ("deleted
	// expired tokens").
	Done string
	// Run does the work once; now is the business clock's time. It returns
	// what changed as log attributes ("count", n), nil when nothing did;
	// they are logged with Done, and with Doing beside a failure.
	Run func(ctx context.Context, now time.Time) (changed []any, err error)
}

// A Loop runs its steps in order at start and then every Every until its
// context ends. A failing step is logged and does not stop the others;
// but while the database is unavailable (recon.EUNAVAILABLE: a failover in
// progress; docs/design.md, Losing the primary; sqlstore.ErrUnavailable) a round ends at the step
// that met it, and the outage is logged once when it starts and once when
// a later round finds the database again, not at every round.
type Loop struct {
	Every time.Duration
	Steps []Step
}

// Run runs the loop until ctx ends, reading the time from clock before each
// step.
func (l Loop) Run(ctx context.Context, clock recon.Clock, log *slog.Logger) {
	t := time.NewTicker(l.Every)
	defer t.Stop()
	var away time.Time // when the database became unavailable; zero: it answers
	for {
		away = l.once(ctx, clock, log, away)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs every step once, in order.
func (l Loop) Once(ctx context.Context, clock recon.Clock, log *slog.Logger) {
	l.once(ctx, clock, log, time.Time{})
}

// once is Once in a loop that found the database unavailable since away
// (zero: it did not); it returns when the database became unavailable,
// zero when every step that ran reached it.
func (l Loop) once(ctx context.Context, clock recon.Clock, log *slog.Logger, away time.Time) time.Time {
	for _, st := range l.Steps {
		changed, err := st.Run(ctx, clock.Now())
		if ctx.Err() != nil {
			return away
		}
		if errors.Is(err, sqlstore.ErrUnavailable) {
			if away.IsZero() {
				log.Warn("the database is unavailable: housekeeping paused until it answers", "step", st.Doing, "err", err)
				away = time.Now()
			}
			return away
		}
		if !away.IsZero() {
			log.Info("the database answers again: housekeeping resumed", "unavailable_for", time.Since(away).Round(time.Millisecond))
			away = time.Time{}
		}
		if err != nil {
			log.Warn(st.Doing, append([]any{"err", err}, changed...)...)
		} else if len(changed) > 0 {
			log.Info(st.Done, changed...)
		}
	}
	return away
}

// SandboxPayoutInterval is how often a node sends the sandbox payout
// connector's refunds that are due (refunds.Sandbox: "a moment" after it
// took them).
const SandboxPayoutInterval = 2 * time.Second

// SweepInterval is how often a node, by default, expires the orders and
// virtual accounts past their expiry and ends the link tokens and sessions
// that time ended (expiry, 15 quiet minutes): --sweep-interval.
const SweepInterval = 15 * time.Second

// Loops are the node's housekeeping, which Serve runs beside the listeners:
// the hourly maintenance of the database and the sweep of what expires
// within seconds. A new piece of housekeeping is one more Step in one of
// them.
func (s *Server) Loops() []Loop {
	db, loc := s.DB, s.cfg.Location
	if loc == nil {
		loc = time.UTC
	}
	count := func(n int64, err error) ([]any, error) {
		if n > 0 {
			return []any{"count", n}, err
		}
		return nil, err
	}
	return []Loop{
		{Every: time.Hour, Steps: []Step{
			// Token sessions that expired more than a day ago.
			{"deleting expired tokens", "deleted expired tokens", func(ctx context.Context, now time.Time) ([]any, error) {
				return count(db.DeleteExpiredTokenSessions(ctx, now.Add(-24*time.Hour)))
			}},
			// API v2's idempotency keys past their 24 hours
			// (docs/api-v2.md, Idempotency).
			{"deleting expired idempotency keys", "deleted expired idempotency keys", func(ctx context.Context, now time.Time) ([]any, error) {
				return count(db.DeleteExpiredIdempotencyKeys(ctx, now))
			}},
			// Notifications delivered longer ago than --delivery-retention.
			{"deleting old delivered notifications", "deleted old delivered notifications", func(ctx context.Context, now time.Time) ([]any, error) {
				return count(db.DeleteDeliveredBefore(ctx, now.Add(-s.cfg.Retention)))
			}},
			// Each company's data older than its data_storage_time, in
			// business calendar days.
			{"applying the companies' data retention", "deleted data older than the companies' retention", func(ctx context.Context, now time.Time) ([]any, error) {
				res, err := db.ApplyRetention(ctx, now.In(loc))
				if res == (recon.RetentionResult{}) && (err == nil || ctx.Err() != nil) {
					return nil, err
				}
				return []any{"transactions", res.Transactions, "deliveries", res.Deliveries, "hub_events", res.HubEvents}, err
			}},
			// The planner's statistics.
			{"refreshing planner statistics", "", func(ctx context.Context, _ time.Time) ([]any, error) {
				return nil, db.Optimize(ctx)
			}},
		}},
		{Every: cmp.Or(s.cfg.SweepInterval, SweepInterval), Steps: []Step{
			// API v2's orders and virtual accounts past their expiry
			// (docs/api-v2.md, Orders), each once whichever node runs it,
			// with ORDER_EXPIRED to subscribers.
			{"expiring orders and virtual accounts", "expired orders", func(ctx context.Context, now time.Time) ([]any, error) {
				n, err := db.ExpireOrders(ctx, now, func(o *recon.Order) (*recon.Delivery, error) {
					return recon.IPNDelivery(o, recon.IPNOrderExpired, now.In(loc))
				})
				return count(int64(n), err) // the store kicks the dispatcher (OnEnqueue)
			}},
			s.endpointHealthStep(loc), // targets failing for 3 days (docs/design.md, D7)
			// The companies' alerts: failing notifications, the exceptions
			// queue, the daily summary; each sent once across nodes
			// (docs/dashboard.md, Alerts).
			{"sending alerts", "sent alerts", func(ctx context.Context, now time.Time) ([]any, error) {
				n, err := s.Alerts.Tick(ctx, now)
				return count(int64(n), err)
			}},
			// The hub's link tokens past their expiry and link sessions
			// quiet for 15 minutes.
			{"ending expired link tokens and idle link sessions", "ended expired link tokens and idle link sessions", func(ctx context.Context, now time.Time) ([]any, error) {
				tokens, sessions, err := db.ExpireHubLinks(ctx, now)
				if tokens > 0 || sessions > 0 {
					return []any{"tokens", tokens, "sessions", sessions}, err
				}
				return nil, err
			}},
		}},
		{Every: SandboxPayoutInterval, Steps: []Step{
			// The sandbox's payouts whose moment has come: their outgoing
			// transfers arrive through ingestion (exactly once across nodes).
			{"sending the sandbox's refunds", "sent the sandbox's refunds", func(ctx context.Context, _ time.Time) ([]any, error) {
				n, err := s.Payouts.Run(ctx)
				return count(int64(n), err)
			}},
			// The invoice providers' answers for pending invoices, each
			// recorded once with its IPN (docs/invoices.md, Providers).
			{"asking the invoice providers for their answers", "recorded the invoice providers' answers", func(ctx context.Context, _ time.Time) ([]any, error) {
				n, err := s.Invoices.Poll(ctx)
				return count(int64(n), err)
			}},
			// The invoices of orders that became paid, for companies with
			// auto_invoice, exactly once (docs/invoices.md, From the order).
			{"issuing the invoices of paid orders", "issued the invoices of paid orders", func(ctx context.Context, _ time.Time) ([]any, error) {
				n, err := s.Invoices.AutoInvoice(ctx)
				return count(int64(n), err)
			}},
		}},
	}
}
