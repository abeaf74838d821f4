// Package recon is the domain of the Recon payment reconciliation platform:
// its types (companies, users, OAuth2 clients, payment-code formats), the
// storage contract every database engine implements, the Error type shared
// by every layer, and pure domain rules. It imports the standard library only;
// adapters (sqlstore, oauth, api, ...) depend on it, never the other way round.
package recon

import (
	"context"
	"time"
)

// Clock tells the time. Production code uses SystemClock; tests inject a fixed one.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Store is the whole storage contract. Both engines (SQLite and PostgreSQL)
// implement it in package sqlstore and pass one conformance suite. No
// consumer takes it whole: each declares the methods it calls (api.Store,
// dashboard.Store, oauth.Store, ...).
type Store interface {
	CompanyStore
	TenantStore
	ListenStore
	UserStore
	TeamStore
	ClientStore
	TokenStore
	BankAccountStore
	TransactionStore
	OrderStore
	VAStore
	ExceptionStore
	RefundStore
	InvoiceStore
	MerchantStore
	DeliveryStore
	HubStore
	DashboardStore
	AuditStore
	AlertStore
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}
