package recon

import (
	"context"
	"strconv"
	"time"
)

// Test mode (docs/design.md, D10). A company's data lives in two tenants: the
// live one, whose id is the company's, and a test-mode twin, made the first
// time the company needs test data or a test credential. Every row of tenant
// data is keyed by its tenant's id, so a test credential — which belongs to
// the twin, and whose Caller.Tenant is the twin's — reaches only test data by
// the same predicate that keeps companies apart. The twin has no
// settings of its own: name, status, configuration, payment-code formats and
// users are the live company's.

// Prefixes of test-mode credentials, visible at a glance.
const (
	TestClientPrefix   = "test_" // OAuth2 client ids and secrets
	TestMerchantPrefix = "TEST-" // gateway merchant ids
)

// ListenerHold is how long a test tenant's notification without an active
// target waits in the outbox for a `recon listen` session to answer it: the
// retry schedule's span. It is then dead (and can be replayed).
const ListenerHold = 72 * time.Hour

// TenantID names a tenant: the company_id its rows carry, and its mode
// (ARCHITECTURE.md, Test mode). The tenant-scoped store methods take one, so
// the tenant a query is scoped to is never a bare int64 that a live company
// id could stand in for: a TenantID is made only where the mode is known —
// LiveTenant for a company's live data, a Tenant row (TenantStore),
// Company.Tenant for either mode, TenantFromRow in storage code and tests;
// the records read for a tenant carry it (Merchant.Tenant, HubCustomer,
// LinkToken and LinkSession.Tenant) — and forgetting the mode does not
// compile. The zero value
// names no tenant (Delivery, Deliveries and ReplayDelivery read it as every
// tenant, for operators).
type TenantID struct {
	id   int64
	live bool
}

// LiveTenant is the live tenant of the company companyID.
func LiveTenant(companyID int64) TenantID { return TenantID{companyID, true} }

// TenantFromRow is the tenant whose rows carry company_id id, in the mode
// live: for storage code, which reads both from a row, and tests.
func TenantFromRow(id int64, live bool) TenantID { return TenantID{id, live} }

// ID is the company_id of the tenant's rows: what SQL compares.
func (t TenantID) ID() int64 { return t.id }

// Live reports whether the tenant holds live data (false for a test twin).
func (t TenantID) Live() bool { return t.live }

// String is the id, as logs and messages have always shown a tenant.
func (t TenantID) String() string { return strconv.FormatInt(t.id, 10) }

// Tenant is one of a company's two data partitions.
type Tenant struct {
	// ID names the tenant: the company's id for live data, the twin's
	// for test data.
	ID TenantID
	// Company is the company's own (live) id: the one users, operators and
	// responses name.
	Company int64
	// Status is the company's status (CompanyActive or CompanyInactive).
	Status string
}

// Live reports whether the tenant holds the company's live data.
func (t *Tenant) Live() bool { return t.ID.live }

// CheckActive returns ErrCompanyInactive unless the company is active.
func (t *Tenant) CheckActive() error {
	if t.Status != CompanyActive {
		return ErrCompanyInactive(t.Company)
	}
	return nil
}

// TenantStore finds and manages tenants.
type TenantStore interface {
	// Tenant returns the tenant whose rows carry company_id id, or
	// ENOTFOUND.
	Tenant(ctx context.Context, id int64) (*Tenant, error)
	// TenantOf returns the company's live tenant, or its test tenant when
	// !live, or ENOTFOUND (a company that has no test tenant yet has no
	// test credential either): the cheap check every authenticated request
	// makes.
	TenantOf(ctx context.Context, companyID int64, live bool) (*Tenant, error)
	// TestTenant returns the test tenant of the live company companyID,
	// making it on first use. ENOTFOUND when there is no such company,
	// EINVALID when companyID is itself a test tenant.
	TestTenant(ctx context.Context, companyID int64) (*Tenant, error)
	// WipeTestData deletes the test data of the company companyID — bank
	// accounts, transactions and everything derived from them, orders,
	// match decisions, deliveries and their attempts, the hub's companies,
	// link tokens and sessions — in one transaction,
	// and nothing else: live data, and the test credentials and
	// notification settings, stay. A company without test data is no error.
	WipeTestData(ctx context.Context, companyID int64) (*WipeResult, error)
}

// ListenKind is the pseudo-kind of the delivery_targets row that holds a
// tenant's listen secret (ListenStore.ListenSecret): never a delivery's
// kind, never sent to, shown by no API.
const ListenKind = "listen"

// ListenStore is what `recon listen` needs of the outbox (docs/design.md, D10).
type ListenStore interface {
	// ListenSecret returns the tenant's listen signing secret, made on
	// first use: what `recon listen` forwards is signed under it, whatever
	// the targets (as stripe listen signs with its own secret), so a
	// developer verifies with one secret and no target is needed.
	ListenSecret(ctx context.Context, tenant TenantID) (string, error)
	// ListenDeliveries returns up to limit of the tenant's deliveries with
	// an id above after that are pending or were created at or after since
	// (the newest, when there are more), in id order: what a listener
	// attached since `since` has to be sent, whoever answered it.
	ListenDeliveries(ctx context.Context, tenant TenantID, after int64, since time.Time, limit int) ([]*Delivery, error)
}

// WipeResult counts what WipeTestData deleted.
type WipeResult struct {
	BankAccounts int64 `json:"bank_accounts"`
	Transactions int64 `json:"transactions"`
	Orders       int64 `json:"orders"`
	Deliveries   int64 `json:"deliveries"`
	HubCompanies int64 `json:"hub_companies"` // with their link tokens and sessions
}

// Livemode reports whether the company record is the live company's (false
// for a test tenant's view of it, see TenantStore).
func (c *Company) Livemode() bool { return c.TestOf == 0 }

// Tenant names the tenant the company record was read through: its own
// live one, or the test twin's for a test tenant's view.
func (c *Company) Tenant() TenantID { return TenantID{c.ID, c.TestOf == 0} }

// LiveID is the company's own id: the live company's, for a test tenant too.
func (c *Company) LiveID() int64 {
	if c.TestOf != 0 {
		return c.TestOf
	}
	return c.ID
}
