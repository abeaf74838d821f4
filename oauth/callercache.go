package oauth

import (
	"slices"
	"sync"
	"time"

	"recon"
)

// callerCacheMax bounds the callers kept; at the bound the cache starts over.
const callerCacheMax = 50_000

// callerCache keeps the callers Authenticate found, by token signature, for
// as long as the store's authentication epoch (recon.TokenStore.AuthEpoch)
// stays where it was when they were looked up, and never past their token's
// expiry. Every change that may refuse an accepted token moves the epoch in
// the transaction that makes it, whichever node or process makes it, so a
// request answered from the cache is answered as the lookups would answer it
// at the moment the epoch was read: a revoked token, a changed role or a
// deactivated company is refused by the next request on every node, at the
// price of one single-row read per request instead of three lookups.
type callerCache struct {
	mu      sync.Mutex
	epoch   int64
	callers map[string]cachedCaller
}

type cachedCaller struct {
	caller  *recon.Caller
	expires time.Time // the token's expiry
}

// candidate returns a copy of the caller kept for the token signature,
// when its token has not expired at now, and the epoch it is kept under:
// it is the token's caller only if the epoch read after this call is the
// same.
func (c *callerCache) candidate(signature string, now time.Time) (*recon.Caller, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.callers[signature]
	if !ok || !now.Before(e.expires) {
		return nil, 0, false
	}
	return copyCaller(e.caller), c.epoch, true
}

// put keeps a copy of caller, found by lookups that started after epoch was
// read. A put under an older epoch than the cache's is dropped; a newer one
// empties the cache first.
func (c *callerCache) put(signature string, epoch int64, caller *recon.Caller, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch < c.epoch {
		return
	}
	if epoch > c.epoch || c.callers == nil || len(c.callers) >= callerCacheMax {
		c.epoch, c.callers = epoch, map[string]cachedCaller{}
	}
	c.callers[signature] = cachedCaller{copyCaller(caller), expires}
}

// copyCaller copies what a handler could change, so that callers handed
// out never share state.
func copyCaller(c *recon.Caller) *recon.Caller {
	out := *c
	out.Scopes = slices.Clone(c.Scopes)
	if c.User != nil {
		u := *c.User
		u.Permissions = slices.Clone(c.User.Permissions)
		out.User = &u
	}
	return &out
}
