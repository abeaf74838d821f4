package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"recon"
)

// recordTimeout bounds the storing of attempts.
const recordTimeout = 30 * time.Second

// maxRecordBatch bounds the attempts of one transaction.
const maxRecordBatch = 256

// recorder stores the workers' attempts from a queue, as many in one
// transaction (recon.DeliveryStore.RecordAttempts) as have queued up while
// the previous transaction ran: group commit, since one transaction per
// attempt caps the throughput of a busy outbox. The queue is bounded, so
// workers wait when the database falls behind. A failed batch is recorded
// again attempt by attempt, so that one bad attempt does not lose the others.
type recorder struct {
	store  Store
	log    *slog.Logger
	stored func([]recon.AttemptOutcome) // called after each batch is stored, or given up
	queue  chan recon.AttemptOutcome
	once   sync.Once
	done   sync.WaitGroup
}

// newRecorder starts a recorder; stored runs after each batch is stored, or
// given up (the dispatcher claims again then: a stored attempt may free the
// next hub event of a tenant, see sqlstore's claimDue; and its deliveries are
// no longer held by the node).
func newRecorder(s Store, log *slog.Logger, stored func([]recon.AttemptOutcome)) *recorder {
	r := &recorder{store: s, log: log, stored: stored, queue: make(chan recon.AttemptOutcome, 2*maxRecordBatch)}
	r.done.Go(r.loop)
	return r
}

// record queues an attempt. It returns before the attempt is stored, while
// the delivery's claim still keeps other dispatchers off it.
func (r *recorder) record(a *recon.DeliveryAttempt, status string, next time.Time) {
	r.queue <- recon.AttemptOutcome{Attempt: a, Status: status, Next: next}
}

// close returns when every attempt recorded so far is stored.
func (r *recorder) close() {
	r.once.Do(func() { close(r.queue) })
	r.done.Wait()
}

func (r *recorder) loop() {
	buf := make([]recon.AttemptOutcome, 0, maxRecordBatch)
	for o := range r.queue {
		buf = append(buf[:0], o)
	fill:
		for len(buf) < maxRecordBatch {
			select {
			case o, ok := <-r.queue:
				if !ok {
					break fill
				}
				buf = append(buf, o)
			default:
				break fill
			}
		}
		r.flush(buf)
		r.stored(buf)
	}
}

// flush stores buf; a failure is logged, and the deliveries keep their
// claims until they lapse, when they are claimed and sent again.
func (r *recorder) flush(buf []recon.AttemptOutcome) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	err := r.store.RecordAttempts(ctx, buf)
	// While the database is unavailable (a failover: docs/design.md,
	// Losing the primary), the batch is tried again until recordTimeout,
	// so that the attempts made meanwhile are recorded when it is back
	// instead of being sent again once their claims lapse.
retry:
	for wait := 100 * time.Millisecond; recon.ErrorCode(err) == recon.EUNAVAILABLE; wait = min(2*wait, 2*time.Second) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			break retry // logged below: the claims lapse and the deliveries are sent again
		case <-t.C:
		}
		err = r.store.RecordAttempts(ctx, buf)
	}
	if err == nil {
		return
	}
	if len(buf) > 1 {
		for _, o := range buf {
			if err := r.store.RecordAttempts(ctx, []recon.AttemptOutcome{o}); err != nil {
				r.log.Error("delivery: record attempt", "delivery", o.Attempt.DeliveryID, "status", o.Status, "err", err)
			}
		}
		return
	}
	r.log.Error("delivery: record attempt", "delivery", buf[0].Attempt.DeliveryID, "status", buf[0].Status, "err", err)
}
