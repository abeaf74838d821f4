package apiv2

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"time"

	"recon"
)

func (h *Handler) transactionRoutes(r *routes) {
	r.add("GET /v2/transactions/sync", h.syncTransactions, recon.ScopeTransactionRead, recon.ActionReadMoney, NoKey)
}

const (
	// DefaultSyncCount is how many changes a sync page holds at most when
	// count is not given; MaxSyncCount is the largest count.
	DefaultSyncCount = 100
	MaxSyncCount     = 500
)

// transactionJSON is a transaction as sync shows it: v1's fields
// (docs/api.md, Transactions) and its match state.
type transactionJSON struct {
	ID              int64   `json:"id"`
	BankAccountID   int64   `json:"bank_account_id"`
	BankBrandName   string  `json:"bank_brand_name"`
	AccountNumber   string  `json:"account_number"`
	TransactionDate string  `json:"transaction_date"`
	AmountIn        int64   `json:"amount_in"`
	AmountOut       int64   `json:"amount_out"`
	Accumulated     int64   `json:"accumulated"`
	Content         string  `json:"transaction_content"`
	ReferenceNumber string  `json:"reference_number"`
	Code            *string `json:"code"`
	SubAccount      *string `json:"sub_account"`
	// MatchOutcome is the latest match decision's outcome (matched,
	// underpaid, overpaid, duplicate), null when none; OrderID its order.
	MatchOutcome *string `json:"match_outcome"`
	OrderID      *int64  `json:"order_id"`
	// Exception is open or resolved for a transaction of the exceptions
	// queue, null otherwise.
	Exception *string `json:"exception"`
	CreatedAt string  `json:"created_at"`
	Livemode  bool    `json:"livemode"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toTransactionJSON(t *recon.SyncedTransaction, livemode bool) transactionJSON {
	j := transactionJSON{
		ID: t.ID, BankAccountID: t.BankAccountID, BankBrandName: t.BankName, AccountNumber: t.AccountNumber,
		TransactionDate: t.TransactionDate.Format(recon.DateTimeLayout),
		AmountIn:        t.AmountIn, AmountOut: t.AmountOut, Accumulated: t.Accumulated,
		Content: t.Content, ReferenceNumber: t.ReferenceNumber, Code: nullable(t.Code), SubAccount: nullable(t.SubAccount),
		MatchOutcome: nullable(t.MatchOutcome), Exception: nullable(t.Exception),
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), Livemode: livemode,
	}
	if t.OrderID != 0 {
		j.OrderID = &t.OrderID
	}
	return j
}

// syncJSON is the data of GET /v2/transactions/sync.
type syncJSON struct {
	Added      []transactionJSON `json:"added"`
	Modified   []transactionJSON `json:"modified"`
	Removed    []int64           `json:"removed"`
	NextCursor string            `json:"next_cursor"`
	HasMore    bool              `json:"has_more"`
}

// syncTransactions serves GET /v2/transactions/sync (docs/api-v2.md,
// Transactions sync): the changes of the caller's tenant after cursor, in
// commit order, up to count of them.
func (h *Handler) syncTransactions(r *http.Request, c *recon.Caller) (*Answer, error) {
	q := r.URL.Query()
	for name := range q {
		if name != "cursor" && name != "count" {
			return nil, recon.FieldError(name, "unknown query parameter %q: sync takes cursor and count", name)
		}
	}
	after := int64(-1) // from the start of what the log keeps
	if q.Has("cursor") && q.Get("cursor") != "" {
		var err error
		if after, err = decodeCursor(q.Get("cursor"), c.Tenant); err != nil {
			return nil, err
		}
	}
	count := DefaultSyncCount
	if q.Has("count") {
		n, err := strconv.Atoi(q.Get("count"))
		if err != nil || n < 1 || n > MaxSyncCount {
			return nil, recon.FieldError("count", "count must be an integer from 1 to %d, not %q", MaxSyncCount, q.Get("count"))
		}
		count = n
	}
	page, err := h.cfg.Store.TransactionChanges(r.Context(), c.Tenant, after, count)
	if err != nil {
		return nil, err
	}
	out := syncJSON{Added: []transactionJSON{}, Modified: []transactionJSON{}, Removed: []int64{},
		NextCursor: encodeCursor(c.Tenant, max(page.Next, 0)), HasMore: page.HasMore}
	for _, ch := range page.Changes {
		switch {
		case ch.Kind == recon.ChangeRemoved:
			out.Removed = append(out.Removed, ch.TransactionID)
		case ch.Transaction == nil:
			// Removed since: a later change of the log says so.
		case ch.Kind == recon.ChangeAdded:
			out.Added = append(out.Added, toTransactionJSON(ch.Transaction, c.Livemode()))
		default:
			out.Modified = append(out.Modified, toTransactionJSON(ch.Transaction, c.Livemode()))
		}
	}
	return ok(out), nil
}

// A cursor is opaque to clients: base64url (no padding) of a version byte
// (1), the tenant's id and mode, and the seq of the last change read, so
// that one tenant's cursor is refused by another (a test cursor in live
// mode included) instead of read as a position in its log.
const cursorVersion = 1

func encodeCursor(tenant recon.TenantID, seq int64) string {
	b := []byte{cursorVersion}
	b = binary.AppendUvarint(b, uint64(tenant.ID()))
	live := byte(0)
	if tenant.Live() {
		live = 1
	}
	b = append(b, live)
	b = binary.AppendUvarint(b, uint64(seq))
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, tenant recon.TenantID) (int64, error) {
	bad := recon.FieldError("cursor", "cursor is not a cursor this endpoint gave: pass next_cursor as it came, or none to start over")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 4 || b[0] != cursorVersion {
		return 0, bad
	}
	id, n := binary.Uvarint(b[1:])
	if n <= 0 || 1+n >= len(b) {
		return 0, bad
	}
	live := b[1+n]
	seq, m := binary.Uvarint(b[2+n:])
	if m <= 0 || 2+n+m != len(b) || live > 1 || seq > 1<<62 {
		return 0, bad
	}
	if int64(id) != tenant.ID() || (live == 1) != tenant.Live() {
		return 0, recon.FieldError("cursor", "cursor belongs to another company or mode: sync with the credentials that got it")
	}
	return int64(seq), nil
}
