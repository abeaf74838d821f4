package sqlstore

import (
	"context"
	"errors"
	"slices"
	"sync"

	"recon"
)

// groupMaxRows bounds the rows one grouped database transaction takes.
const groupMaxRows = 2 * recon.MaxIngestBatch

// ingestGroup coalesces concurrent IngestTransactions calls whose bank
// accounts overlap into one database transaction (group commit). A feed that
// pushes each transfer as it comes makes many small concurrent calls, and a
// feed that mixes accounts in each batch makes calls that share accounts;
// each would take its accounts' locks and pay a dozen round trips and a
// commit on its own, queueing behind the others on the shared locks.
// Instead, calls that arrive while a batch sharing any of their accounts is
// being stored wait in that batch's lane, and the lane's next database
// transaction stores all of them, in arrival order, as if one after the
// other: a reference repeated across calls is a duplicate of the first,
// and rows of the same date take that order for their balances. Every
// writer still holds the lock of every account it writes (the transaction
// locks the union of its calls' accounts), so idempotency and running
// balances do not depend on the grouping. Calls sharing no account with a lane go to lanes of their own,
// so that (on PostgreSQL) they still run in parallel; a call that overlaps
// several lanes merges them.
//
// On SQLite, which runs one writer at a time whatever the accounts, lanes
// would only queue for the database's lock one commit each: there a company
// has one lane (oneLane), and calls on different accounts share its
// transactions and their commit too (docs/design.md, "SQLite statements
// prepared once per connection" measures it).
//
// Should a grouped transaction fail (a call naming another company's bank
// account, say), each of its calls is stored again on its own, so that one
// call's error is never another's, and the lane's next group commits only
// after them (groupEnd.after).
type ingestGroup struct {
	mu      sync.Mutex
	lanes   map[int64][]*lane // by company
	oneLane bool              // a company's calls all share one lane (SQLite)
}

// lane is the calls of one company waiting for, or being stored by, one
// drainer, and the bank accounts they write.
type lane struct {
	accounts map[int64]bool // of the calls queued and being stored
	queue    []*ingestCall
	merged   bool          // into another lane: its drainer stops
	arrived  chan struct{} // a call was queued (one buffered): wakes a drainer waiting on an empty queue
	running  *groupEnd     // the group its drainer stores last
	// behind are the groups of lanes merged into this one, perhaps still
	// being stored: the lane's next group follows them as it follows its
	// own (ingestGroup.drain).
	behind []*groupEnd
}

// queued appends calls to l's queue and wakes its drainer, should it wait.
func (l *lane) queued(calls ...*ingestCall) {
	l.queue = append(l.queue, calls...)
	select {
	case l.arrived <- struct{}{}:
	default:
	}
}

func (l *lane) overlaps(ids []int64) bool {
	for _, id := range ids {
		if l.accounts[id] {
			return true
		}
	}
	return false
}

func (l *lane) add(ids []int64) {
	for _, id := range ids {
		l.accounts[id] = true
	}
}

// accountsOf returns the distinct bank accounts of in.
func accountsOf(in []recon.TransactionInput) []int64 {
	ids := make([]int64, len(in))
	for i := range in {
		ids[i] = in[i].BankAccountID
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

type ingestCall struct {
	in       []recon.TransactionInput
	codes    []string
	dups     *batchDups // computed before the call's turn
	accounts []int64
	res      []recon.IngestResult
	err      error
	done     chan struct{}
}

func (g *ingestGroup) ingest(ctx context.Context, db *DB, companyID int64, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error) {
	call := &ingestCall{in: in, codes: codes, dups: newBatchDups(in), accounts: accountsOf(in), done: make(chan struct{})}
	if l := g.enqueue(companyID, call); l != nil {
		// A drainer stores this call first, then whatever queued behind it.
		go g.drain(context.WithoutCancel(ctx), db, companyID, l)
	}
	select {
	case <-call.done:
		return call.res, call.err
	case <-ctx.Done():
		// The call may still be stored: a retry reports its rows as duplicates.
		return nil, ctx.Err()
	}
}

// enqueue puts call in the company's lane that shares an account with it,
// merging every such lane into the first, or in a new lane, which it
// returns for the caller to start its drainer.
func (g *ingestGroup) enqueue(companyID int64, call *ingestCall) *lane {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lanes == nil {
		g.lanes = map[int64][]*lane{}
	}
	var into *lane
	kept := g.lanes[companyID][:0]
	for _, l := range g.lanes[companyID] {
		switch {
		case !g.oneLane && !l.overlaps(call.accounts):
			kept = append(kept, l)
		case into == nil:
			into = l
			kept = append(kept, l)
		default:
			// l's queue moves; into's next group follows l's running
			// one, if any, as it follows its own.
			into.queued(l.queue...)
			for id := range l.accounts {
				into.accounts[id] = true
			}
			into.behind = append(into.behind, l.behind...)
			if l.running != nil {
				into.behind = append(into.behind, l.running)
			}
			l.queue, l.behind, l.merged = nil, nil, true
		}
	}
	g.lanes[companyID] = kept
	if into != nil {
		into.queued(call)
		into.add(call.accounts)
		return nil
	}
	l := &lane{accounts: map[int64]bool{}, queue: []*ingestCall{call}, arrived: make(chan struct{}, 1)}
	l.add(call.accounts)
	g.lanes[companyID] = append(g.lanes[companyID], l)
	return l
}

// drain stores the lane's calls, a group at a time, until none is left or
// the lane was merged into another. On PostgreSQL a group's transaction
// begins as soon as the one before it starts to commit: its statements up
// to the accounts' lock (and the server's work before them) overlap that
// commit, and the lock, which the committing transaction holds, orders
// them after it (docs/design.md, "The next group begins while one
// commits"). SQLite, one writer at a time, stores one group after the
// other. A lane whose queue is empty lives until its last group is
// stored, so that a call coming meanwhile queues behind that group, and
// begins at once, rather than in a lane of its own.
func (g *ingestGroup) drain(ctx context.Context, db *DB, companyID int64, l *lane) {
	var prev *groupEnd
	for {
		if prev != nil {
			<-prev.committing
		}
		g.mu.Lock()
		if !l.merged && len(l.queue) == 0 && prev != nil {
			g.mu.Unlock()
			select {
			case <-prev.done:
				prev = nil
			case <-l.arrived: // its group begins now, after prev
			}
			continue
		}
		if l.merged || len(l.queue) == 0 {
			if !l.merged {
				g.lanes[companyID] = slices.DeleteFunc(g.lanes[companyID], func(o *lane) bool { return o == l })
				if len(g.lanes[companyID]) == 0 {
					delete(g.lanes, companyID)
				}
			}
			g.mu.Unlock()
			return
		}
		n, rows := 0, 0
		for n < len(l.queue) && (n == 0 || rows+len(l.queue[n].in) <= groupMaxRows) {
			rows += len(l.queue[n].in)
			n++
		}
		calls := l.queue[:n:n]
		l.queue = l.queue[n:]
		// The lane now writes the accounts of this group and of the calls
		// still queued, no longer those of groups already stored.
		l.accounts = map[int64]bool{}
		for _, c := range calls {
			l.add(c.accounts)
		}
		for _, c := range l.queue {
			l.add(c.accounts)
		}
		after := l.behind
		if prev != nil {
			after = append(after, prev)
		}
		end := newGroupEnd()
		l.running, l.behind = end, nil
		g.mu.Unlock()
		if g.oneLane {
			g.store(ctx, db, companyID, calls, nil, end)
			continue
		}
		// A merged lane's group may not hold its accounts' locks yet: this
		// group, which may need them too, begins once it does.
		for _, b := range after {
			<-b.committing
		}
		go g.store(ctx, db, companyID, calls, after, end)
		prev = end
	}
}

// groupEnd is what a lane's group tells the next one of its progress.
type groupEnd struct {
	committing chan struct{} // closed when it is about to commit, or has ended
	once       sync.Once     // of closing committing
	decided    chan struct{} // closed once its grouped transaction committed or failed
	failed     bool          // which, set before decided closes
	done       chan struct{} // closed once every call of it is stored
}

func newGroupEnd() *groupEnd {
	return &groupEnd{committing: make(chan struct{}), decided: make(chan struct{}), done: make(chan struct{})}
}

func (e *groupEnd) commitStarts() { e.once.Do(func() { close(e.committing) }) }

// errBehindFailedGroup rolls back a group whose previous group failed at
// its commit after this one began (groupEnd.after).
var errBehindFailedGroup = errors.New("sqlstore: the group before failed")

// after is the commit hook (onCommitting) of a group that follows the
// groups prevs (the lane's previous one, and those of lanes merged into
// it): it commits once each has committed, or has had every call stored
// when it failed, and only then lets the lane's next group begin. A group
// begins while a previous one commits and waits for its locks; should that
// COMMIT fail then (the database lost, a deferred write refused), the
// failed group's calls are stored again one by one, and this group,
// holding the accounts' locks they need, must not commit first: it rolls
// back (errBehindFailedGroup) and is stored after them, so the lane's rows
// keep arrival order.
func (e *groupEnd) after(prevs []*groupEnd) func() error {
	return func() error {
		for _, p := range prevs {
			<-p.decided
			if p.failed {
				select {
				case <-p.done:
				default:
					return errBehindFailedGroup
				}
			}
		}
		e.commitStarts()
		return nil
	}
}

// store stores calls as one group after the groups prevs (none on
// SQLite, whose one writer stores one group after the other), telling the
// next group by end.
func (g *ingestGroup) store(ctx context.Context, db *DB, companyID int64, calls []*ingestCall, prevs []*groupEnd, end *groupEnd) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
		end.commitStarts()
		close(end.done)
	}()
	in, codes, dups := calls[0].in, calls[0].codes, calls[0].dups
	if len(calls) > 1 {
		in, codes, dups = nil, nil, &batchDups{}
		for _, c := range calls {
			in = append(in, c.in...)
			codes = append(codes, c.codes...)
			dups.keys = append(dups.keys, c.dups.keys...)
			dups.memos = append(dups.memos, c.dups.memos...)
		}
	}
	res, err := db.ingestOnce(onCommitting(ctx, end.after(prevs)), companyID, in, codes, dups)
	end.failed = err != nil
	close(end.decided)
	if err == nil {
		for _, c := range calls {
			c.res, res = res[:len(c.in):len(c.in)], res[len(c.in):]
		}
		return
	}
	if len(calls) == 1 && !errors.Is(err, errBehindFailedGroup) {
		calls[0].err = err
		return
	}
	// One after the other, in arrival order, after every call of the groups
	// before, and before the lane's next group begins (not at their
	// commits).
	for _, p := range prevs {
		<-p.done
	}
	ctx = onCommitting(ctx, nil)
	for _, c := range calls {
		c.res, c.err = db.ingestOnce(ctx, companyID, c.in, c.codes, c.dups)
	}
}
