package recon

import (
	"context"
	"math"
	"time"
)

// The merchant dashboard (issue 11) signs people in with the accounts of the
// OAuth login page and keeps them signed in with a session of its own.

// PasswordVerifier checks a user's e-mail and password behind the login
// throttle of docs/design.md, D9 (failures per account and per address make
// further attempts wait, then lock): the one check every sign-in page makes.
// oauth.Server implements it. Unknown addresses and wrong passwords are both
// EUNAUTHORIZED; a throttled attempt is ERATELIMITED and checks nothing.
type PasswordVerifier interface {
	VerifyPassword(ctx context.Context, companyID int64, email, password, address string) (*User, error)
	// VerifyEmailPassword is the dashboard's sign-in by e-mail alone: the
	// active users of the address, in any company, whose password it is
	// (a person in several companies picks one; docs/dashboard.md, Team).
	// None is EUNAUTHORIZED, whether or not the address exists.
	VerifyEmailPassword(ctx context.Context, email, password, address string) ([]*User, error)
}

// DashboardSession is a signed-in dashboard user. The cookie holds a random
// token; the store keeps only its SHA-256 hash.
type DashboardSession struct {
	ID        int64
	UserID    int64
	Company   int64 // the user's (live) company
	Live      bool  // which of the company's tenants the session shows
	CreatedAt time.Time
	// LastSeenAt is the last request's time (kept to the minute): the
	// session ends after an idle while without requests.
	LastSeenAt time.Time
	// ExpiresAt is the absolute end, however active the session.
	ExpiresAt time.Time
	// Users counts the session's active users (dashboard_session_users),
	// read with the session: more than one shows "Switch company"
	// (docs/dashboard.md, Team).
	Users int
}

// DayFlow is one day's money of a tenant: what came in and went out, and how
// much of what came in paid an order (matched, underpaid or overpaid).
type DayFlow struct {
	Day                   string // YYYY-MM-DD, business time
	In, Out               int64
	InCount, OutCount     int64
	Matched, MatchedCount int64 // money in that paid an order
}

// Unmatched is the money in that paid no order (no code, no open order, or a
// duplicate payment).
func (d DayFlow) Unmatched() int64 { return d.In - d.Matched }

// UnmatchedCount counts the transfers in that paid no order.
func (d DayFlow) UnmatchedCount() int64 { return d.InCount - d.MatchedCount }

// Add returns the sum of two days (its Day is d's).
func (d DayFlow) Add(o DayFlow) DayFlow {
	return DayFlow{Day: d.Day, In: SaturatingAdd(d.In, o.In), Out: SaturatingAdd(d.Out, o.Out), InCount: d.InCount + o.InCount,
		OutCount: d.OutCount + o.OutCount, Matched: SaturatingAdd(d.Matched, o.Matched), MatchedCount: d.MatchedCount + o.MatchedCount}
}

// SaturatingAdd adds two non-negative amounts, stopping at math.MaxInt64
// (which then means "at least that much"): the dashboard's sums of money,
// which must never wrap and never fail the ingestion they are kept by.
func SaturatingAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// Attention counts what a tenant should look at: orders partly paid, and
// notifications failing (pending after a failed attempt) or dead.
type Attention struct {
	UnderpaidOrders    int64
	UnderpaidShortfall int64 // what those orders still lack
	FailingDeliveries  int64
	DeadDeliveries     int64
	// OpenExceptions counts the open exceptions, up to MaxCountedExceptions
	// (a count that reaches it means "at least").
	OpenExceptions int64
}

// MaxCountedExceptions bounds the count of open exceptions on the home: it
// reads at most this many index entries.
const MaxCountedExceptions = 10_000

// DashboardStore is what the dashboard needs beyond the other stores.
type DashboardStore interface {
	// PageLinkStore reads what links the pages to each other (links.go).
	PageLinkStore
	// CreateDashboardSession stores s (setting its ID) under the token's
	// hash. An unknown user is ENOTFOUND.
	CreateDashboardSession(ctx context.Context, s *DashboardSession, tokenHash []byte) error
	// DashboardSession returns the session with the token's hash, or
	// EUNAUTHORIZED when there is none or it has ended at now: past its
	// ExpiresAt, or idle (LastSeenAt) for longer than idle, in which case it
	// is deleted. A live session's LastSeenAt is moved to now when it is a
	// minute old or more.
	DashboardSession(ctx context.Context, tokenHash []byte, now time.Time, idle time.Duration) (*DashboardSession, error)
	// SetDashboardSessionMode switches the session between live and test data.
	SetDashboardSessionMode(ctx context.Context, tokenHash []byte, live bool) error
	// DeleteDashboardSession deletes the session (sign-out); none is no error.
	DeleteDashboardSession(ctx context.Context, tokenHash []byte) error
	// DayFlows returns the tenant's money per day from the day from to the
	// day to (YYYY-MM-DD, business time, at most 62 days), one entry per
	// day in order, days without transactions included.
	DayFlows(ctx context.Context, tenant TenantID, from, to string) ([]DayFlow, error)
	// Attention counts the tenant's underpaid orders, failing and dead
	// notifications and open exceptions.
	Attention(ctx context.Context, tenant TenantID) (*Attention, error)
	// OrderDeliveries returns up to limit of the tenant's IPNs about the
	// order (Delivery.OrderID), oldest first.
	OrderDeliveries(ctx context.Context, tenant TenantID, o *Order, limit int) ([]*Delivery, error)
	// SearchTransactions returns a page of the tenant's transactions that
	// pass s, reading a bounded window of the rows its §4.3 filter selects
	// (TransactionSearchPage says how far back). A Before that is not the
	// tenant's transaction is EINVALID.
	SearchTransactions(ctx context.Context, tenant TenantID, s TransactionSearch) (*TransactionSearchPage, error)
}
