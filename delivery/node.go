package delivery

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"recon"
)

// Defaults of a Dispatcher's node heartbeat.
const (
	DefaultHeartbeat   = time.Second
	DefaultNodeTimeout = 5 * time.Second
)

// A dispatcher is a node: it joins with a heartbeat row, beats every
// Heartbeat, and names itself in its claims. Each beat also declares dead
// the nodes whose heartbeat is older than NodeTimeout and releases their
// claims, so a crashed node's deliveries are sent again within NodeTimeout
// plus a heartbeat, not a whole lease (the lease stays as the last resort,
// e.g. for a node cut off from the database while it still sends).
//
// A node alive but slow (stalled, or cut off from the database) for longer
// than NodeTimeout is declared dead although it is not. The others may then
// send what it had claimed; its own side is fenced:
//   - it starts an attempt only while its last beat is fresher than half of
//     NodeTimeout (it waits for the next beat otherwise), so after a stall
//     it starts nothing before it has learned whether it was declared dead;
//   - the beat that finds its row gone (recon.NodeBeat.Joined) releases its
//     remaining claims and starts a new epoch; deliveries claimed in an
//     earlier epoch are not started.
//
// So the deliveries sent twice are at most those whose attempt was already
// in progress when a stalled node's heartbeat stopped: within at-least-once
// (every payload carries a stable id for receivers to deduplicate). A node
// that stops gracefully keeps beating until its attempts in progress are
// recorded, and a late result never moves a delivered delivery back
// (sqlstore's recordUpdate changes only pending ones).
type node struct {
	id    string
	fresh time.Duration // how recent the last beat must be to start an attempt

	// claimMu is held across a claim and across a beat, so that no claim
	// commits between a rejoining beat's release and its new epoch.
	claimMu sync.Mutex

	mu      sync.Mutex
	epoch   int64
	last    time.Time     // monotonic time the last successful beat started
	changed chan struct{} // closed at each successful beat
}

func newNode(id string, fresh time.Duration) *node {
	return &node{id: id, fresh: fresh, changed: make(chan struct{})}
}

// randomNodeID is a node id when none is configured.
func randomNodeID() string { return "node-" + rand.Text()[:13] }

// beaten records a successful beat started at start (monotonic time);
// joined starts a new epoch.
func (n *node) beaten(start time.Time, joined bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if joined {
		n.epoch++
	}
	n.last = start
	close(n.changed)
	n.changed = make(chan struct{})
}

// currentEpoch is the epoch claims made now belong to.
func (n *node) currentEpoch() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.epoch
}

// live waits until the node may start an attempt of a delivery claimed in
// epoch: the epoch is current and the last beat is fresh. It returns false
// when the epoch has passed, when ctx ends, or when within is over first.
//
// Freshness is measured in monotonic time, not on the dispatcher's Clock:
// it is about how long this process really went without a beat, and a test
// clock that jumps must not fence the node.
func (n *node) live(ctx context.Context, epoch int64, within time.Duration) bool {
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		n.mu.Lock()
		current, fresh, changed := n.epoch == epoch, time.Since(n.last) <= n.fresh, n.changed
		n.mu.Unlock()
		if !current {
			return false
		}
		if fresh {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		case <-t.C:
			return false
		}
	}
}

// heartbeat beats every interval until ctx ends; beat is called once before
// (by Run) so that the node has joined before it claims.
func (r *run) heartbeat(ctx context.Context) {
	t := time.NewTicker(r.beatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.beat(ctx)
		}
	}
}

// beat records the node's heartbeat, declares dead the nodes whose beat is
// older than NodeTimeout and releases their claims, and kicks the loop
// when it released any. It reports whether the beat was stored.
func (r *run) beat(ctx context.Context) bool {
	r.node.claimMu.Lock()
	defer r.node.claimMu.Unlock()
	bctx, cancel := context.WithTimeout(ctx, r.nodeTimeout)
	defer cancel()
	start, now := time.Now(), r.clock.Now()
	b, err := r.Store.BeatDeliveryNode(bctx, r.node.id, now, now.Add(-r.nodeTimeout))
	if err != nil {
		// While the database is unavailable, the outage is logged once
		// (and its end once): the beats go on every interval meanwhile.
		if ctx.Err() == nil && !r.outage.failed(r.log, r.node.id, err) {
			r.log.Error("delivery: node heartbeat", "node", r.node.id, "err", err)
		}
		return false
	}
	if r.outage.answered(r.log, r.node.id) {
		r.releaseDue = true
	}
	if b.Joined {
		r.releaseDue = false // the store released every claim of the node
	}
	if b.Joined && r.joined {
		r.log.Warn("delivery: this node was declared dead (no heartbeat for the node timeout) and joined again; "+
			"its claims were released", "node", r.node.id, "node_timeout", r.nodeTimeout)
	}
	r.joined = true
	r.node.beaten(start, b.Joined)
	if b.Released > 0 {
		r.log.Info("delivery: released the claims of stopped nodes", "node", r.node.id, "released", b.Released)
		r.Kick()
	}
	if r.releaseDue {
		r.releaseLost(bctx)
	}
	return true
}

// releaseLost releases, once the database answers after an outage or after
// a failed claim, the node's claims it no longer works on (held): a claim
// whose commit reached the database while its answer was lost or failed to
// scan, an attempt that could not start (its target unreadable, the node
// not live), attempts whose record was given up. The node knows nothing of
// them, and they would otherwise wait for their lease (docs/design.md,
// Losing the primary). Called by the beat, under claimMu: no claim commits
// meanwhile. On failure it is tried again at the next beat.
func (r *run) releaseLost(ctx context.Context) {
	n, err := r.Store.ReleaseDeliveryClaims(ctx, r.node.id, r.held.list())
	if err != nil {
		if ctx.Err() == nil && !r.outage.failed(r.log, r.node.id, err) {
			r.log.Error("delivery: release the claims lost in the outage", "node", r.node.id, "err", err)
		}
		return
	}
	r.releaseDue = false
	if n > 0 {
		r.log.Info("delivery: released the claims this node lost track of", "node", r.node.id, "released", n)
		r.Kick()
	}
}

// held is the set of deliveries a node works on: claimed, and neither
// recorded nor dropped yet (queued for a worker, in an attempt, queued for
// the recorder).
type held struct {
	mu  sync.Mutex
	ids map[int64]struct{}
}

func (h *held) add(list []*recon.Delivery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ids == nil {
		h.ids = map[int64]struct{}{}
	}
	for _, d := range list {
		h.ids[d.ID] = struct{}{}
	}
}

func (h *held) drop(ids ...int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		delete(h.ids, id)
	}
}

func (h *held) list() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]int64, 0, len(h.ids))
	for id := range h.ids {
		out = append(out, id)
	}
	return out
}

// CheckHeartbeat reports whether a node timeout leaves room for missed beats.
func CheckHeartbeat(heartbeat, nodeTimeout time.Duration) error {
	if heartbeat <= 0 || nodeTimeout < 3*heartbeat {
		return fmt.Errorf("delivery: the node timeout (%s) must be at least three heartbeats (%s)", nodeTimeout, heartbeat)
	}
	return nil
}

// outage remembers whether the database is unavailable (recon.EUNAVAILABLE:
// a failover in progress, the primary lost; docs/design.md, Losing the
// primary), so that the dispatcher logs an outage once when it starts and
// once when it ends, not at every heartbeat, claim and attempt in between.
type outage struct {
	mu    sync.Mutex
	since time.Time // when it started (monotonic); zero: the database answers
}

// failed reports whether err means the database is unavailable, logging the
// start of the outage when it is the first such error.
func (o *outage) failed(log *slog.Logger, node string, err error) bool {
	if recon.ErrorCode(err) != recon.EUNAVAILABLE {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since.IsZero() {
		o.since = time.Now()
		log.Warn("delivery: the database is unavailable; sending paused until it answers", "node", node, "err", err)
	}
	return true
}

// answered records that the database answered, logging the end of an
// outage; it reports whether an outage ended.
func (o *outage) answered(log *slog.Logger, node string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since.IsZero() {
		return false
	}
	log.Info("delivery: the database answers again; sending resumed", "node", node,
		"unavailable_for", time.Since(o.since).Round(time.Millisecond))
	o.since = time.Time{}
	return true
}

// beatAfter returns a channel closed at the next successful beat.
func (n *node) beatAfter() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.changed
}
