package recon

import "context"

// Kinds of change of a transaction, as GET /v2/transactions/sync reports
// them (docs/api-v2.md, Transactions sync).
const (
	// ChangeAdded: the transaction was ingested (any way in).
	ChangeAdded = "added"
	// ChangeModified: its code (a recode) or its match state (a manual
	// match or another resolution of its exception) changed.
	ChangeModified = "modified"
	// ChangeRemoved: retention (or the test-data wipe) deleted it.
	ChangeRemoved = "removed"
)

// TransactionChange is one change of a tenant's transactions. Seq is its
// place in the tenant's change log: the order the changes committed.
type TransactionChange struct {
	Seq           int64
	Kind          string
	TransactionID int64
	// Transaction is the transaction as it is now, with its match state;
	// nil for a removed one, and for one removed since the change (a later
	// change of the log says so).
	Transaction *SyncedTransaction
}

// SyncedTransaction is a transaction with its match state.
type SyncedTransaction struct {
	Transaction
	// MatchOutcome is the outcome of its latest match decision (matched,
	// underpaid, overpaid, duplicate), "" when none was recorded.
	MatchOutcome string
	// OrderID is the order that decision names, 0 when none.
	OrderID int64
	// Exception is "open" or "resolved" when the transaction is in the
	// exceptions queue, "" otherwise.
	Exception string
}

// TransactionChanges is a page of a tenant's change log.
type TransactionChanges struct {
	Changes []TransactionChange
	// Next is the seq to read after: the last change of the page, or the
	// cursor given when the page is empty.
	Next int64
	// HasMore says whether changes after Next were committed already.
	HasMore bool
}

// SyncStore reads a tenant's change log (sqlstore, migration 00025).
type SyncStore interface {
	// TransactionChanges returns up to limit changes of the tenant after
	// seq after (-1: from the first the log holds), in commit order. A change the log no longer holds lies
	// between after and the first it returns (its retention purged it):
	// that is a 409 cursor_expired (CursorExpired).
	// Retention (RetentionStore.ApplyRetention) purges the log after the
	// company's data_storage_time.
	TransactionChanges(ctx context.Context, tenant TenantID, after int64, limit int) (*TransactionChanges, error)
}

// CursorExpired is the error of a sync cursor older than what the change
// log keeps: ECONFLICT, reason cursor_expired.
func CursorExpired() *Error {
	return Errorf(ECONFLICT, "the cursor is older than the changes Recon keeps (the company's data_storage_time): sync again from the start, without a cursor").WithReason("cursor_expired")
}
