package sqlstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"

	"recon"
)

// groupMaxRows bounds the rows one grouped database transaction takes.
const groupMaxRows = 2 * recon.MaxIngestBatch

// ingestGroup coalesces concurrent IngestTransactions calls for the same
// bank accounts into one database transaction (group commit). A feed that
// pushes each transfer as it comes makes many small concurrent calls; each
// would take the account's lock and pay a dozen round trips and a commit on
// its own, queueing behind the others. Instead, calls that arrive while a
// batch for their accounts is being stored wait, and the next database
// transaction stores all of them, in arrival order, as if one after the
// other: a reference repeated across calls is a duplicate of the first,
// balances run in that order. Calls for other accounts are grouped apart, so
// that (on PostgreSQL) they still run in parallel.
//
// Should a grouped transaction fail (a call naming another company's bank
// account, say), each of its calls is stored again on its own, so that one
// call's error is never another's.
type ingestGroup struct {
	mu      sync.Mutex
	pending map[groupKey][]*ingestCall
}

// groupKey is what calls must share to be stored together: the company and
// the set of bank accounts they write.
type groupKey struct {
	company  int64
	accounts string
}

func keyOf(companyID int64, in []recon.TransactionInput) groupKey {
	ids := make([]int64, len(in))
	for i := range in {
		ids[i] = in[i].BankAccountID
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return groupKey{companyID, b.String()}
}

type ingestCall struct {
	in    []recon.TransactionInput
	codes []string
	res   []recon.IngestResult
	err   error
	done  chan struct{}
}

func (g *ingestGroup) ingest(ctx context.Context, db *DB, companyID int64, in []recon.TransactionInput, codes []string) ([]recon.IngestResult, error) {
	call := &ingestCall{in: in, codes: codes, done: make(chan struct{})}
	key := keyOf(companyID, in)
	g.mu.Lock()
	if g.pending == nil {
		g.pending = map[groupKey][]*ingestCall{}
	}
	_, running := g.pending[key]
	g.pending[key] = append(g.pending[key], call)
	g.mu.Unlock()
	if !running {
		// A drainer stores this call first, then whatever queued behind it.
		go g.drain(context.WithoutCancel(ctx), db, key)
	}
	select {
	case <-call.done:
		return call.res, call.err
	case <-ctx.Done():
		// The call may still be stored: a retry reports its rows as duplicates.
		return nil, ctx.Err()
	}
}

// drain stores the key's pending calls, a group at a time, until none is left.
func (g *ingestGroup) drain(ctx context.Context, db *DB, key groupKey) {
	for {
		g.mu.Lock()
		queue := g.pending[key]
		if len(queue) == 0 {
			delete(g.pending, key)
			g.mu.Unlock()
			return
		}
		n, rows := 0, 0
		for n < len(queue) && (n == 0 || rows+len(queue[n].in) <= groupMaxRows) {
			rows += len(queue[n].in)
			n++
		}
		calls := queue[:n:n]
		g.pending[key] = queue[n:]
		g.mu.Unlock()
		g.store(ctx, db, key.company, calls)
	}
}

func (g *ingestGroup) store(ctx context.Context, db *DB, companyID int64, calls []*ingestCall) {
	defer func() {
		for _, c := range calls {
			close(c.done)
		}
	}()
	if len(calls) == 1 {
		calls[0].res, calls[0].err = db.ingestOnce(ctx, companyID, calls[0].in, calls[0].codes)
		return
	}
	var in []recon.TransactionInput
	var codes []string
	for _, c := range calls {
		in = append(in, c.in...)
		codes = append(codes, c.codes...)
	}
	res, err := db.ingestOnce(ctx, companyID, in, codes)
	if err != nil {
		for _, c := range calls {
			c.res, c.err = db.ingestOnce(ctx, companyID, c.in, c.codes)
		}
		return
	}
	for _, c := range calls {
		c.res, res = res[:len(c.in):len(c.in)], res[len(c.in):]
	}
}
