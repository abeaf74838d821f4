package recon

import (
	"context"
	"io"
	"time"
)

// The storage of electronic invoices (docs/invoices.md, Numbering; The life
// cycle). The rules an invoice's change must keep are checked by the store
// under the invoices' row locks, so that two changes racing for one
// original see each other.

// The business rules the store's invoice operations answer with an
// EUNPROCESSABLE *Error whose Reason is the code (RuleError; API v2: 422
// with it as error_code; docs/invoices.md, The life cycle).
const (
	// RuleInvoiceNotPending: a provider's answer is for a pending invoice.
	RuleInvoiceNotPending = "invoice_not_pending"
	// RuleNoInvoiceProvider: the tenant has no provider to send an invoice
	// to (a live tenant today): invoices can be drafted and exported
	// (XML, PDF) but not sent (docs/invoices.md, Providers).
	RuleNoInvoiceProvider = "invoice_provider_unavailable"
)

// InvoiceFilter selects a page of a tenant's invoices, newest first.
type InvoiceFilter struct {
	Status  string
	OrderID int64
	// Original keeps the invoices that replace or adjust the invoice of
	// this reference code (the dashboard's history).
	Original string
	// From and To are whole days of created_at, YYYY-MM-DD, inclusive, in
	// Location (UTC when nil).
	From, To      string
	Location      *time.Location
	Page, PerPage int
}

// InvoiceAnswer is a provider's answer for a pending invoice: accepted with
// the tax authority's code (CQTCode), or refused (Failure).
type InvoiceAnswer struct {
	CQTCode string
	Failure string
}

// InvoiceLookupAlphabet is the lookup code's letters: no 0, O, 1, I, a
// buyer reads it off paper.
const InvoiceLookupAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// InvoiceLookupLen is the length of a lookup code (32^12 = 2^60 of them).
const InvoiceLookupLen = 12

// NewInvoiceLookupCode returns a random lookup code (the public lookup
// page's key), reading random (the store's injected source).
func NewInvoiceLookupCode(random io.Reader) string {
	const n = len(InvoiceLookupAlphabet)
	out := make([]byte, 0, InvoiceLookupLen)
	var b [1]byte
	for len(out) < InvoiceLookupLen {
		if _, err := io.ReadFull(random, b[:]); err != nil {
			panic(err) // crypto/rand.Read never returns an error (Go 1.24)
		}
		out = append(out, InvoiceLookupAlphabet[int(b[0])%n]) // 256 is a multiple of 32: uniform
	}
	return string(out)
}

// InvoiceStore stores a tenant's invoices (docs/invoices.md). Every method
// but InvoiceByLookup and the maintenance ones is scoped to one tenant:
// another tenant's invoice is ENOTFOUND. The store sets ID, CompanyID,
// ReferenceCode, TrackingCode, LookupCode, Number and the times; the
// caller computes the amounts.
type InvoiceStore interface {
	// CreateInvoice stores inv as a draft (issue false), or issues it:
	// numbered in the issuing transaction, pending, with provider's name.
	CreateInvoice(ctx context.Context, tenant TenantID, inv *Invoice, issue bool, provider string, now time.Time) (*Invoice, error)
	// IssueInvoice numbers a draft, dated issued, and makes it pending with
	// provider's name (RuleInvalidState otherwise).
	IssueInvoice(ctx context.Context, tenant TenantID, ref string, issued time.Time, provider string, now time.Time) (*Invoice, error)
	// SetInvoiceXML stores a pending invoice's signed XML.
	SetInvoiceXML(ctx context.Context, tenant TenantID, ref string, xml []byte) error
	// InvoiceXML returns an invoice's signed XML (nil for a draft).
	InvoiceXML(ctx context.Context, tenant TenantID, ref string) ([]byte, error)
	// RecordInvoiceAnswer records a provider's answer for a pending
	// invoice: issued with the authority's code, or failed with the
	// reason (its number stays used), and the INVOICE_ISSUED or
	// INVOICE_FAILED IPN for a subscribing target. An invoice already
	// answered is RuleInvoiceNotPending.
	RecordInvoiceAnswer(ctx context.Context, tenant TenantID, ref string, ans InvoiceAnswer, now time.Time) (*Invoice, error)
	// CorrectInvoice issues inv (Relation InvoiceRelReplace or
	// InvoiceRelAdjust) for the original named originalRef: the rules of
	// the life cycle are checked under the original's lock, and the
	// original's new status (replaced, adjusted) and inv's insert are one
	// transaction. It returns the new invoice.
	CorrectInvoice(ctx context.Context, tenant TenantID, originalRef string, inv *Invoice, provider string, now time.Time) (*Invoice, error)
	// CancelInvoice cancels an issued invoice with the reason, under its lock.
	CancelInvoice(ctx context.Context, tenant TenantID, ref, reason string, now time.Time) (*Invoice, error)
	// Invoice, InvoiceByTracking read one invoice of the tenant.
	Invoice(ctx context.Context, tenant TenantID, ref string) (*Invoice, error)
	InvoiceByTracking(ctx context.Context, tenant TenantID, tracking string) (*Invoice, error)
	// InvoiceByLookup finds an invoice of any tenant by its lookup code
	// (the public lookup page), with its tenant.
	InvoiceByLookup(ctx context.Context, lookup string) (*Invoice, TenantID, error)
	// Invoices returns a page of the tenant's invoices, newest first, and
	// the total.
	Invoices(ctx context.Context, tenant TenantID, f InvoiceFilter) ([]*Invoice, int64, error)
	// PendingInvoices returns, oldest first, invoices pending since at
	// most before, with their tenants (the provider's poll).
	PendingInvoices(ctx context.Context, before time.Time, limit int) ([]*Invoice, []TenantID, error)
	// QueuedPaidOrders returns orders that became paid and wait for the
	// auto_invoice step, oldest first, with their tenants.
	QueuedPaidOrders(ctx context.Context, limit int) ([]*Order, []TenantID, error)
	// TakeQueuedOrder takes the order off the queue, exactly once across
	// nodes: with inv, it stores inv (OrderID set, auto) in the same
	// transaction, issued to provider, or a draft when provider is ""; nil
	// inv only drops it. When another node took it first
	// it returns nil, nil.
	TakeQueuedOrder(ctx context.Context, tenant TenantID, orderID int64, inv *Invoice, provider string, now time.Time) (*Invoice, error)
	// DropQueuedOrders takes the tenant's orders off the queue with
	// nothing made, in one statement: TakeQueuedOrder with a nil inv for
	// each.
	DropQueuedOrders(ctx context.Context, tenant TenantID, orderIDs []int64) error
}
