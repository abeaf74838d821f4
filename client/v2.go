package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// V2 calls API v2 (docs/api-v2.md) with the client's token source, base URL
// and retry policy. Get it with Client.V2. Its errors are *Error too, with
// Code holding the answer's error_code.
//
// Each area's calls are in a file of their own (v2.go: transactions sync;
// v2orders.go, v2refunds.go), and mirror the JSON with V2-prefixed types.
// A POST takes V2CallOptions: WithIdempotencyKey makes it safe to retry.
type V2 struct{ c *Client }

// V2 returns the client of API v2.
func (c *Client) V2() *V2 { return &V2{c} }

// V2CallOption configures one API v2 call.
type V2CallOption func(*request)

// WithIdempotencyKey sends X-Idempotency-Key: key (1 to 255 visible ASCII
// characters) with a POST. The server runs the request once per key: a
// repeat with the same body gets the first answer (see Replayed). With a
// key, the client retries the POST like a GET (5xx, network failures), and
// also a 409 idempotency_key_in_use, which means the first attempt still
// runs. Use a new key for each new operation (NewIdempotencyKey), and the
// same key for retries of it, across restarts of the caller too: keys live
// 24 hours on the server (a refund's as long as the refund).
func WithIdempotencyKey(key string) V2CallOption {
	return func(r *request) {
		if r.header == nil {
			r.header = http.Header{}
		}
		r.header.Set("X-Idempotency-Key", key)
		r.idempotent, r.inUseRetry = true, true
	}
}

// Replayed sets *replayed to whether the answer was the server's replay of
// an earlier request with the same idempotency key (Idempotent-Replayed).
func Replayed(replayed *bool) V2CallOption { return func(r *request) { r.replayed = replayed } }

// NewIdempotencyKey returns a random key (32 hex digits) for
// WithIdempotencyKey. Keep it with the operation it names, so that a retry
// after a crash sends the same one.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// v2Envelope is the success body of API v2: {"status":"success","data":...,"meta":{...}}.
type v2Envelope[T any] struct {
	Data T          `json:"data"`
	Meta V2PageMeta `json:"meta"`
}

// V2PageMeta is the meta of a v2 list: the page, its size and the total.
type V2PageMeta struct {
	Page    int   `json:"page"`
	PerPage int   `json:"per_page"`
	Total   int64 `json:"total"`
}

// call sends one v2 request with opts and decodes the data of its answer
// into out; it returns the meta (zero unless the route answers a page).
func (v *V2) call(ctx context.Context, method, path string, query url.Values, body any, out any, opts ...V2CallOption) (V2PageMeta, error) {
	req := &request{method: method, path: path, query: query, json: body, auth: authBearer, idempotent: method == http.MethodGet}
	for _, o := range opts {
		o(req)
	}
	env := v2Envelope[any]{Data: out}
	_, err := v.c.do(ctx, req, &env)
	return env.Meta, err
}

// Call sends one request to API v2, for a route the SDK has no method of:
// path is the escaped path from /v2 on (a query may follow), body is
// encoded as JSON (nil: none), and the answer's data is decoded into out
// (nil: ignored). It returns the answer's meta (a list's page).
func (v *V2) Call(ctx context.Context, method, path string, body, out any, opts ...V2CallOption) (V2PageMeta, error) {
	return v.call(ctx, method, path, nil, body, out, opts...)
}

// v2Filter is a list's query: its non-empty filters, then page (sent from
// minPage on) and perPage (0: the server's default).
func v2Filter(filters map[string]string, page, minPage, perPage int) url.Values {
	q := url.Values{}
	for k, s := range filters {
		if s != "" {
			q.Set(k, s)
		}
	}
	if perPage > 0 {
		q.Set("per_page", strconv.Itoa(perPage))
	}
	if page >= minPage {
		q.Set("page", strconv.Itoa(page))
	}
	return q
}

// v2List reads one page of a v2 list at path with query q.
func v2List[T any](ctx context.Context, v *V2, path string, q url.Values) ([]T, V2PageMeta, error) {
	var list []T
	meta, err := v.call(ctx, http.MethodGet, path, q, nil, &list)
	return list, meta, err
}

// v2Pages iterates over every item of a v2 list, page after page of
// perPage items (0: the server's default), fetch reading one page.
func v2Pages[T any](ctx context.Context, fetch func(ctx context.Context, page int) ([]T, V2PageMeta, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page := 1; ; page++ {
			items, meta, err := fetch(ctx, page)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if len(items) == 0 || int64(meta.Page)*int64(meta.PerPage) >= meta.Total {
				return
			}
		}
	}
}

// V2Transaction is a transaction as GET /v2/transactions/sync shows it: the
// v1 fields and its match state.
type V2Transaction struct {
	ID              int64   `json:"id"`
	BankAccountID   int64   `json:"bank_account_id"`
	BankBrandName   string  `json:"bank_brand_name"`
	AccountNumber   string  `json:"account_number"`
	TransactionDate string  `json:"transaction_date"` // YYYY-MM-DD HH:MM:SS, business time zone
	AmountIn        int64   `json:"amount_in"`
	AmountOut       int64   `json:"amount_out"`
	Accumulated     int64   `json:"accumulated"`
	Content         string  `json:"transaction_content"`
	ReferenceNumber string  `json:"reference_number"`
	Code            *string `json:"code"`
	SubAccount      *string `json:"sub_account"`
	// MatchOutcome is matched, underpaid, overpaid or duplicate, nil when
	// no decision was recorded; OrderID the decision's order.
	MatchOutcome *string `json:"match_outcome"`
	OrderID      *int64  `json:"order_id"`
	// Exception is "open" or "resolved" for a transaction of the
	// exceptions queue, nil otherwise.
	Exception *string `json:"exception"`
	CreatedAt string  `json:"created_at"`
	Livemode  bool    `json:"livemode"`
}

// V2SyncPage is one answer of GET /v2/transactions/sync.
type V2SyncPage struct {
	Added    []V2Transaction `json:"added"`
	Modified []V2Transaction `json:"modified"`
	Removed  []int64         `json:"removed"`
	// NextCursor is where the next call starts: store it once the page is
	// applied.
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// SyncTransactions reads the changes after cursor ("" from the oldest the
// server keeps), at most count of them (0: the server's default, 100):
// GET /v2/transactions/sync. An expired cursor is an *Error with Code
// CodeCursorExpired: sync again from "".
func (v *V2) SyncTransactions(ctx context.Context, cursor string, count int) (*V2SyncPage, error) {
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if count > 0 {
		q.Set("count", strconv.Itoa(count))
	}
	var page V2SyncPage
	if _, err := v.call(ctx, http.MethodGet, "/v2/transactions/sync", q, nil, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// Sync iterates over the pages of changes after cursor until the server
// has no more: apply each page, then keep its NextCursor for the next run.
// It stops at the first error.
//
//	for page, err := range c.V2().Sync(ctx, saved) {
//		if err != nil { ... }
//		apply(page.Added, page.Modified, page.Removed)
//		saved = page.NextCursor
//	}
func (v *V2) Sync(ctx context.Context, cursor string) iter.Seq2[*V2SyncPage, error] {
	return func(yield func(*V2SyncPage, error) bool) {
		for {
			page, err := v.SyncTransactions(ctx, cursor, 0)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || !page.HasMore {
				return
			}
			cursor = page.NextCursor
		}
	}
}
