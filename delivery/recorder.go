package delivery

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"recon"
)

// Outcome is one attempt and the state it leaves its delivery in. It is an
// alias of an unnamed struct type, so that a store can take []Outcome without
// importing this package (sqlstore.AttemptOutcome is the identical type).
type Outcome = struct {
	Attempt *recon.DeliveryAttempt
	Status  string
	Next    time.Time
}

// BatchRecorder is implemented by stores that record many attempts in one
// transaction (sqlstore.DB does). A Dispatcher whose store implements it
// records attempts in batches: one transaction per attempt caps the
// throughput of a busy outbox. A failed batch is recorded again attempt by
// attempt.
type BatchRecorder interface {
	RecordAttempts(ctx context.Context, outcomes []Outcome) error
}

// recorder stores attempts for the workers.
type recorder interface {
	// record stores an attempt; it may return before the attempt is stored,
	// while the delivery's lease still keeps other dispatchers off it.
	record(ctx context.Context, a *recon.DeliveryAttempt, status string, next time.Time)
	// close returns when every attempt recorded so far is stored.
	close()
}

// recordTimeout bounds the storing of attempts.
const recordTimeout = 30 * time.Second

// maxRecordBatch bounds the attempts of one transaction.
const maxRecordBatch = 256

func newRecorder(s recon.DeliveryStore, log *slog.Logger) recorder {
	if b, ok := s.(BatchRecorder); ok {
		r := &batchRecorder{store: s, batch: b, log: log, queue: make(chan Outcome, 2*maxRecordBatch)}
		r.done.Add(1)
		go r.loop()
		return r
	}
	return directRecorder{store: s, log: log}
}

// directRecorder records each attempt in its own transaction, synchronously.
type directRecorder struct {
	store recon.DeliveryStore
	log   *slog.Logger
}

func (r directRecorder) record(ctx context.Context, a *recon.DeliveryAttempt, status string, next time.Time) {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	recordOne(ctx, r.store, r.log, Outcome{a, status, next})
}

func (directRecorder) close() {}

// recordOne stores one attempt, logging a failure: the delivery keeps its
// lease until it lapses, and is then claimed and sent again.
func recordOne(ctx context.Context, s recon.DeliveryStore, log *slog.Logger, o Outcome) {
	if err := s.RecordAttempt(ctx, o.Attempt, o.Status, o.Next); err != nil {
		log.Error("delivery: record attempt", "delivery", o.Attempt.DeliveryID, "status", o.Status, "err", err)
	}
}

// batchRecorder records attempts from a queue, as many in one transaction
// as have queued up while the previous transaction ran: group commit. The
// queue is bounded, so workers wait when the database falls behind.
type batchRecorder struct {
	store recon.DeliveryStore
	batch BatchRecorder
	log   *slog.Logger
	queue chan Outcome
	once  sync.Once
	done  sync.WaitGroup
}

func (r *batchRecorder) record(_ context.Context, a *recon.DeliveryAttempt, status string, next time.Time) {
	r.queue <- Outcome{a, status, next}
}

func (r *batchRecorder) close() {
	r.once.Do(func() { close(r.queue) })
	r.done.Wait()
}

func (r *batchRecorder) loop() {
	defer r.done.Done()
	buf := make([]Outcome, 0, maxRecordBatch)
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
	}
}

func (r *batchRecorder) flush(buf []Outcome) {
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := r.batch.RecordAttempts(ctx, buf); err == nil {
		return
	} else if len(buf) == 1 {
		r.log.Error("delivery: record attempt", "delivery", buf[0].Attempt.DeliveryID, "err", err)
		return
	}
	for _, o := range buf {
		o.Attempt.ID = 0
		recordOne(ctx, r.store, r.log, o)
	}
}
