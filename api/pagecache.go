package api

import (
	"container/list"
	"strconv"
	"sync"

	"recon"
)

// pageCache keeps encoded pages of GET /api/v1/transactions by tenant and
// filter, each with the version of the tenant's transactions it was read
// at, in at most max bytes, the least recently used going first. A request
// is answered from here only when the tenant's version, read after it came,
// is the kept page's: the version its authentication read on the primary
// (recon.Caller.TenantVersion), or else the store's
// (TransactionsIfChanged, read on the database the page would come from).
// A change committed by any node or process is in the next answer
// (docs/design.md, "Listing pages kept encoded").
type pageCache struct {
	mu    sync.Mutex
	max   int
	size  int
	pages map[pageKey]*list.Element
	order list.List // of *cachedPage, the most recently used first
}

type pageKey struct {
	tenant recon.TenantID
	filter string
}

type cachedPage struct {
	key     pageKey
	version int64
	body    []byte
}

// noVersion is the known version of a page not kept: versions are ≥ 0.
const noVersion = -1

// pageOverhead is what a kept page costs beyond its body and key: the map
// entry, the list element and the cachedPage.
const pageOverhead = 160

// newPageCache is a cache of at most max bytes; nil when max is 0: the
// handler then reads every page anew, without its version.
func newPageCache(max int) *pageCache {
	if max <= 0 {
		return nil
	}
	return &pageCache{max: max, pages: make(map[pageKey]*list.Element)}
}

// get returns k's page and its version, or noVersion and nil.
func (c *pageCache) get(k pageKey) (int64, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.pages[k]
	if !ok {
		return noVersion, nil
	}
	c.order.MoveToFront(e)
	p := e.Value.(*cachedPage)
	return p.version, p.body
}

// put keeps body as k's page at version, unless a page of a later version
// is kept (read meanwhile by another request, or from the primary while
// this one read a standby behind it) or body would take more than an
// eighth of the cache.
func (c *pageCache) put(k pageKey, version int64, body []byte) {
	cost := cap(body) + len(k.filter) + pageOverhead
	if cost > c.max/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.pages[k]; ok {
		p := e.Value.(*cachedPage)
		if version < p.version {
			return
		}
		c.size += cap(body) - cap(p.body)
		p.version, p.body = version, body
		c.order.MoveToFront(e)
	} else {
		c.pages[k] = c.order.PushFront(&cachedPage{k, version, body})
		c.size += cost
	}
	for c.size > c.max {
		p := c.order.Remove(c.order.Back()).(*cachedPage)
		delete(c.pages, p.key)
		c.size -= cap(p.body) + len(p.key.filter) + pageOverhead
	}
}

// filterKey spells f whole: two filters with the same key select the same
// page.
func filterKey(f recon.TransactionFilter) string {
	b := make([]byte, 0, 64)
	b = strconv.AppendInt(b, f.BankAccountID, 10)
	for _, s := range []string{f.AccountNumber, f.ReferenceNumber, f.FromDate, f.ToDate} {
		b = strconv.AppendQuote(append(b, ' '), s)
	}
	for _, a := range []*int64{f.AmountIn, f.AmountOut} {
		b = append(b, ' ')
		if a == nil {
			b = append(b, '-')
		} else {
			b = strconv.AppendInt(b, *a, 10)
		}
	}
	b = strconv.AppendInt(append(b, ' '), int64(f.Page), 10)
	return string(strconv.AppendInt(append(b, ' '), int64(f.Limit), 10))
}
