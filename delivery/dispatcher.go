// Package delivery sends the notifications of the durable outbox (IPN of the
// payment gateway, webhooks of the bank-linking hub): a Dispatcher claims due
// deliveries from a recon.DeliveryStore with a lease, sends each with the
// SSRF-safe, signing Client, records every attempt, and retries failures on
// a Schedule until they are delivered or dead. URLChecker (CheckURL) checks
// target URLs when they are saved. Any number of dispatchers, in one process
// or on many nodes sharing a PostgreSQL database, may run at once: a claim
// never hands the same row to two of them while its lease runs, and a
// dispatcher that stops beating (see node.go) has its claims taken up by the
// others within NodeTimeout.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"recon"
)

// Defaults of a Dispatcher.
const (
	DefaultWorkers    = 16
	DefaultBatch      = 64
	DefaultLease      = 2 * time.Minute
	DefaultPoll       = 250 * time.Millisecond
	DefaultStatsEvery = 15 * time.Second
)

// NoTargetError is the error of the attempt recorded for a delivery whose
// company has no active target of its kind. Such a delivery is dead at once: an
// inactive target suppresses events (spec §6.1 rule 3; docs/hub.md, Events),
// and retrying for days a notification nobody configured would only pile up
// rows. An operator or the merchant may replay it after configuring the target.
func NoTargetError(kind string) string {
	if kind == recon.DeliveryIPN {
		return "no active IPN target"
	}
	return "no active " + kind + " target"
}

// Store is the part of the outbox (recon.DeliveryStore) the dispatcher needs.
type Store interface {
	ClaimDeliveries(ctx context.Context, node string, now time.Time, n int, lease time.Duration) ([]*recon.Delivery, error)
	RecordAttempts(ctx context.Context, outcomes []recon.AttemptOutcome) error
	BeatDeliveryNode(ctx context.Context, node string, now, deadBefore time.Time) (recon.NodeBeat, error)
	LeaveDeliveryNode(ctx context.Context, node string) (int64, error)
	ReleaseDeliveryClaims(ctx context.Context, node string, keep []int64) (int64, error)
	// A bare company id, not a recon.TenantID: a claimed delivery's mode
	// is not known here (recon.DeliveryStore.DeliveryTarget).
	DeliveryTarget(ctx context.Context, companyID int64, kind string) (*recon.Target, error)
	DeliveryStats(ctx context.Context) (map[string]int64, error)
}

// Dispatcher sends due deliveries. Set the fields, then call Run; zero
// fields take the defaults. Kick may be called at any time.
type Dispatcher struct {
	Store Store
	// Client sends (default NewClient(ClientOptions{}): internal targets refused).
	Client *Client
	// Schedule is the retry policy (zero: DefaultSchedule).
	Schedule Schedule
	// Clock tells the time (default recon.SystemClock).
	Clock recon.Clock
	// Logger logs failures of the store (default: discard). Failed attempts
	// are not logged: they are recorded.
	Logger *slog.Logger
	// Metrics, when not nil, counts attempts and refreshes the outbox gauges.
	Metrics *Metrics
	// Workers bounds the concurrent attempts (default 16).
	Workers int
	// Batch bounds the deliveries of one claim (default 64). A dispatcher
	// holds no more claimed deliveries than its workers can start within
	// the lease when every attempt takes the client's whole timeout: Workers
	// × (Lease/timeout - 1), 48 with the defaults.
	Batch int
	// Lease is how long a claim keeps other dispatchers off a delivery
	// (default 2 min); it must exceed the client's timeout by more than 5 s.
	Lease time.Duration
	// Poll is how often the store is asked for due deliveries when there
	// was nothing to do (default 250 ms). Kick cuts the wait short, to no
	// less than claimGap from the previous claim's start.
	Poll time.Duration
	// StatsEvery is how often the outbox gauges are refreshed (default 15 s).
	StatsEvery time.Duration
	// NodeID names this dispatcher in its claims and its heartbeat row
	// (default: a random id). Live nodes must not share one.
	NodeID string
	// Heartbeat is how often the node refreshes its heartbeat and looks for
	// dead nodes (default 1 s).
	Heartbeat time.Duration
	// NodeTimeout is how old a node's heartbeat gets before the others
	// declare it dead and take up its claims (default 5 s, at least three
	// heartbeats). A crashed node's deliveries are sent again within about
	// NodeTimeout plus a heartbeat.
	NodeTimeout time.Duration

	kickOnce sync.Once
	kick     chan struct{}
}

// Kick wakes the dispatcher at once, as when a delivery has just been
// enqueued; it never blocks, and kicks made while one is pending merge.
func (d *Dispatcher) Kick() {
	select {
	case d.kickChan() <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) kickChan() chan struct{} {
	d.kickOnce.Do(func() { d.kick = make(chan struct{}, 1) })
	return d.kick
}

// run is a Dispatcher's configuration with the defaults applied.
type run struct {
	*Dispatcher
	client   *Client
	clock    recon.Clock
	log      *slog.Logger
	workers  int
	batch    int
	lease    time.Duration
	poll     time.Duration
	stats    time.Duration
	recorder *recorder

	beatEvery   time.Duration
	nodeTimeout time.Duration
	node        *node
	joined      bool // a beat has been stored (under node.claimMu)
	outage      outage
	held        held
	releaseDue  bool // an outage ended or a claim failed: releaseLost is to run (under node.claimMu)
}

// Run joins the dispatcher's node, sends due deliveries until ctx is done,
// then waits for the attempts in progress to finish and be recorded, leaves
// (releasing the claims whose attempt had not started, for another
// dispatcher or this one restarted to send at once), and returns nil. Errors
// of the store are logged and retried; only a misconfiguration is returned.
func (d *Dispatcher) Run(ctx context.Context) error {
	r := &run{
		Dispatcher: d, client: d.Client, clock: d.Clock, log: d.Logger,
		workers: d.Workers, batch: d.Batch, lease: d.Lease, poll: d.Poll, stats: d.StatsEvery,
		beatEvery: cmpOr(d.Heartbeat, DefaultHeartbeat), nodeTimeout: cmpOr(d.NodeTimeout, DefaultNodeTimeout),
	}
	if d.Store == nil {
		return errors.New("delivery: Dispatcher.Store is nil")
	}
	if r.client == nil {
		r.client = NewClient(ClientOptions{})
	}
	if r.clock == nil {
		r.clock = recon.SystemClock{}
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.workers = cmpOr(r.workers, DefaultWorkers)
	r.batch = cmpOr(r.batch, DefaultBatch)
	r.lease = cmpOr(r.lease, DefaultLease)
	r.poll = cmpOr(r.poll, DefaultPoll)
	r.stats = cmpOr(r.stats, DefaultStatsEvery)
	if err := CheckLease(r.lease, r.client.Timeout()); err != nil {
		return err
	}
	if err := CheckHeartbeat(r.beatEvery, r.nodeTimeout); err != nil {
		return err
	}
	id := d.NodeID
	if id == "" {
		id = randomNodeID()
	}
	r.node = newNode(id, r.nodeTimeout/2)
	// Join before claiming; while the database does not answer, retry.
	for !r.beat(ctx) {
		if !r.sleep(ctx, r.beatEvery) {
			return nil
		}
	}
	// The heartbeat outlives ctx until the loop has finished the attempts
	// in progress: a node that stopped beating while it still sends would
	// be declared dead and its deliveries sent again by another.
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	var beats sync.WaitGroup
	beats.Go(func() { r.heartbeat(beatCtx) })
	r.recorder = newRecorder(d.Store, r.log, func(batch []recon.AttemptOutcome) {
		for _, o := range batch {
			r.held.drop(o.Attempt.DeliveryID)
		}
		d.Kick()
	})
	err := r.loop(ctx)
	stopBeats()
	beats.Wait()
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if n, err := d.Store.LeaveDeliveryNode(lctx, id); err != nil {
		r.log.Error("delivery: leave", "node", id, "err", err)
	} else if n > 0 {
		r.log.Info("delivery: released the claims not started", "node", id, "released", n)
	}
	return err
}

// CheckLease reports whether a claim's lease leaves room to make an attempt
// that takes the client's whole timeout and to record it.
func CheckLease(lease, timeout time.Duration) error {
	if lease <= timeout+recordMargin {
		return fmt.Errorf("delivery: the lease (%s) must be longer than the client's timeout (%s) plus %s to record an attempt",
			lease, timeout, recordMargin)
	}
	return nil
}

// cmpOr returns v, or def when v is not positive.
func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// recordMargin is the time left, after an attempt that took the client's
// whole timeout, to record it before the claim's lease lapses.
const recordMargin = 5 * time.Second

// job is a claimed delivery waiting for a worker.
type job struct {
	d     *recon.Delivery
	epoch int64 // the node's epoch at the claim
	// startBy is the last moment an attempt can start and still end, and
	// be recorded, within the claim's lease: after it, none is made.
	startBy time.Time
	targets *targetCache
}

// loop claims due deliveries and hands them to a fixed pool of workers.
//
// A dispatcher holds (claimed, queued or in progress) at most Workers times
// (Lease/timeout - 1) deliveries, so that even when every receiver takes the
// whole timeout each held delivery starts, and ends, within its lease: with
// the defaults, 16 × 3 = 48. A claim takes up to Batch of them. When a claim
// comes back full, more may be due: the next claim is made as soon as half a
// claim's worth of room is free, without waiting for the poll.
func (r *run) loop(ctx context.Context) error {
	// Attempts finish and are recorded after ctx is done.
	work := context.WithoutCancel(ctx)
	var stats sync.WaitGroup
	if r.Metrics != nil {
		stats.Go(func() { r.refreshStats(ctx) })
	}
	maxHeld := r.workers * max(1, int(r.lease/r.client.Timeout())-1)
	perClaim := min(r.batch, maxHeld)
	// held has a token for each delivery held; jobs never blocks.
	held := make(chan struct{}, maxHeld)
	jobs := make(chan job, maxHeld)
	var workers sync.WaitGroup
	for range r.workers {
		workers.Go(func() {
			for j := range jobs {
				// Once stopped, queued deliveries are not started: Run
				// releases their claims when it leaves.
				if ctx.Err() != nil || !r.attempt(ctx, work, j) {
					r.held.drop(j.d.ID)
				}
				<-held
			}
		})
	}
	defer func() {
		close(jobs)
		workers.Wait()
		r.recorder.close()
		stats.Wait()
	}()

	backlog := false
	for {
		want := 1
		if backlog {
			want = max(1, perClaim/2)
		}
		n := 0
		for n < want {
			select {
			case held <- struct{}{}:
				n++
			case <-ctx.Done():
				release(held, n)
				return nil
			}
		}
	more:
		for n < perClaim {
			select {
			case held <- struct{}{}:
				n++
			default:
				break more
			}
		}

		r.node.claimMu.Lock()
		epoch := r.node.currentEpoch()
		now, started := r.clock.Now(), time.Now()
		list, err := r.Store.ClaimDeliveries(ctx, r.node.id, now, n, r.lease)
		r.held.add(list)
		if err != nil {
			// The claim may have committed though its answer failed (a
			// row that did not scan, the context ended while the rows were
			// read): the next beat releases what this node holds unknowingly,
			// as after an outage, rather than leaving it to the lease.
			r.releaseDue = true
		}
		r.node.claimMu.Unlock()
		if err != nil {
			release(held, n)
			if ctx.Err() != nil {
				return nil
			}
			if r.outage.failed(r.log, r.node.id, err) {
				// Paused: no claim is tried again before a beat has
				// reached the database (docs/design.md, Losing the primary).
				if !r.pause(ctx) {
					return nil
				}
				backlog = false
				continue
			}
			r.log.Error("delivery: claim", "err", err)
			if !r.sleep(ctx, r.poll) {
				return nil
			}
			backlog = false
			continue
		}
		release(held, n-len(list))
		targets := newTargetCache(r.Store)
		startBy := now.Add(r.lease - r.client.Timeout() - recordMargin)
		for _, d := range list {
			jobs <- job{d: d, epoch: epoch, startBy: startBy, targets: targets}
		}
		backlog = len(list) == n
		if !backlog && !r.sleep(ctx, r.poll) {
			return nil
		}
		if !backlog && !waitFor(ctx, claimGap-time.Since(started), nil) {
			return nil
		}
	}
}

// pause waits, while the database is unavailable, for the next successful
// beat (the heartbeat tries every Heartbeat) or a kick (a delivery just
// enqueued: the database answered); false when ctx is done.
func (r *run) pause(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-r.node.beatAfter():
	case <-r.kickChan():
	}
	return true
}

// sleep waits for d or a kick; false when ctx is done.
func (r *run) sleep(ctx context.Context, d time.Duration) bool {
	return waitFor(ctx, d, r.kickChan())
}

// waitFor waits for d or, unless it is nil, a receive on wake; false when
// ctx is done.
func waitFor(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return true
}

// claimGap is the least time from the start of a claim to the start of the
// next one woken by a kick. Each transfer that pays an order enqueues an IPN
// and kicks; without the gap, single-transfer pushes at 500/s made a claim
// of about 2.7 deliveries every 5 ms, and on PostgreSQL each claim costs
// about 2 ms of planning (docs/benchmarks.md, "PostgreSQL: claims at most
// every 10 ms"). A backlog is claimed without the gap.
const claimGap = 10 * time.Millisecond

func release(slots chan struct{}, n int) {
	for range n {
		<-slots
	}
}

// attempt makes one attempt of j's delivery and records it; once stop is
// done, it starts none, but an attempt started ends (ctx is not cancelled).
// It reports whether it handed an attempt to the recorder: false when it
// made none.
func (r *run) attempt(stop, ctx context.Context, j job) bool {
	dl := j.d
	if !r.node.live(stop, j.epoch, j.startBy.Sub(r.clock.Now())) {
		if stop.Err() != nil {
			return false
		}
		// The node was declared dead since the claim (and the claim
		// released), or its heartbeat is stale and may be declared so
		// before the attempt ends: another node sends it.
		r.log.Warn("delivery: node not live, attempt not started", "delivery", dl.ID, "node", r.node.id)
		return false
	}
	start := r.clock.Now()
	if start.After(j.startBy) {
		// Another dispatcher may claim it before an attempt made now would
		// end. Leave it to the next claim once the lease lapses.
		r.log.Warn("delivery: lease too short to start an attempt", "delivery", dl.ID)
		return false
	}
	r.Metrics.sending(1)
	defer r.Metrics.sending(-1)
	a := &recon.DeliveryAttempt{DeliveryID: dl.ID, At: start}
	t, err := j.targets.get(ctx, dl.CompanyID, dl.Kind)
	if err != nil && recon.ErrorCode(err) != recon.ENOTFOUND {
		// The lease lapses and another claim tries again.
		if !r.outage.failed(r.log, r.node.id, err) {
			r.log.Error("delivery: read target", "delivery", dl.ID, "company", dl.CompanyID, "err", err)
		}
		return false
	}
	if err == nil && !t.Active && t.DisabledBy == recon.DisabledByRecon {
		// Held, not attempted, until the target is re-enabled and what it
		// missed replayed (docs/design.md, D7).
		a.Error = recon.HeldError
		r.recorder.record(a, recon.DeliveryDead, time.Time{})
		return true
	}
	if err != nil || !t.Active {
		a.Error = NoTargetError(dl.Kind)
		r.recorder.record(a, recon.DeliveryDead, time.Time{})
		r.Metrics.attempt(outcomeDead, 0, 0)
		return true
	}
	a.URL = t.URL
	res := r.client.Send(ctx, t, dl, start)
	a.StatusCode, a.Latency, a.Response = res.StatusCode, res.Latency, res.Response
	if res.OK() {
		r.recorder.record(a, recon.DeliveryDelivered, time.Time{})
		r.Metrics.attempt(outcomeDelivered, res.Latency, r.clock.Now().Sub(dl.CreatedAt))
		return true
	}
	a.Error = res.Error(r.client.Timeout())
	// The schedule counts from the delivery's creation, when its first
	// attempt is due; so a replayed delivery older than the schedule's
	// MaxAge gets one attempt, and is dead again if that one fails.
	next, dead := r.Schedule.Next(dl.Attempts+1, dl.CreatedAt, r.clock.Now())
	if dead {
		r.recorder.record(a, recon.DeliveryDead, time.Time{})
		r.Metrics.attempt(outcomeDead, res.Latency, 0)
		return true
	}
	r.recorder.record(a, recon.DeliveryPending, next)
	r.Metrics.attempt(outcomeFailed, res.Latency, 0)
	return true
}

func (r *run) refreshStats(ctx context.Context) {
	t := time.NewTicker(r.stats)
	defer t.Stop()
	for {
		if stats, err := r.Store.DeliveryStats(ctx); err == nil {
			r.Metrics.stats(stats)
		} else if ctx.Err() == nil && !r.outage.failed(r.log, r.node.id, err) {
			r.log.Error("delivery: stats", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// targetCache resolves the targets of one claim's deliveries: each company's
// target is read once per claim, so a corrected URL or secret applies from
// the next claim on.
type targetCache struct {
	store Store
	mu    sync.Mutex
	m     map[targetKey]*targetEntry
}

type targetKey struct {
	company int64
	kind    string
}

type targetEntry struct {
	once sync.Once
	t    *recon.Target
	err  error
}

func newTargetCache(s Store) *targetCache {
	return &targetCache{store: s, m: map[targetKey]*targetEntry{}}
}

func (c *targetCache) get(ctx context.Context, company int64, kind string) (*recon.Target, error) {
	k := targetKey{company, kind}
	c.mu.Lock()
	e := c.m[k]
	if e == nil {
		e = &targetEntry{}
		c.m[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.t, e.err = c.store.DeliveryTarget(ctx, company, kind) })
	return e.t, e.err
}
