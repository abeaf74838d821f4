package recon

import "context"

// What links the dashboard's pages to each other (docs/dashboard.md,
// "Links between pages"): a transaction to the order it paid or names and to
// its exception, a notification to its order, a customer to their orders
// and transfers. The store reads them a page at a time, by the indexes the
// pages already use (match_decisions by transaction and by order, the
// exceptions' key, the orders' customer index).

// TransactionLink is what one transaction is linked to.
type TransactionLink struct {
	// OrderID and Invoice name the order the newest decision that paid one
	// paid, else the order the newest decision naming one names (a
	// duplicate payment, an inactive account's); 0 and "" when none.
	OrderID int64
	Invoice string
	// Outcome is the newest decision's outcome ("" when none: an
	// unmatched transfer has no decision row).
	Outcome string
	// Paid: a decision paid an order (PaysOrder), the matched state of the
	// dashboard's search (StateMatched).
	Paid bool
	// ExceptionKind is the transfer's exception's kind, "" when it has
	// none; ExceptionResolved says whether it is resolved.
	ExceptionKind     string
	ExceptionResolved bool
}

// State is t's matched state as the dashboard's search reads it:
// StateMatched when a decision paid an order, StateUnmatched for money in
// that paid none, "" for a transfer out.
func (l TransactionLink) State(t *Transaction) string {
	switch {
	case l.Paid:
		return StateMatched
	case t.AmountIn > 0:
		return StateUnmatched
	}
	return ""
}

// ExceptionState is "open", "resolved" or "" (no exception).
func (l TransactionLink) ExceptionState() string {
	switch {
	case l.ExceptionKind == "":
		return ""
	case l.ExceptionResolved:
		return "resolved"
	}
	return "open"
}

// MaxCountedDeliveries bounds the count of a notifications list: it reads
// at most this many index entries (a count that reaches it means "at
// least").
const MaxCountedDeliveries = 10_000

// MaxCustomerTransfers bounds the transfers a customer's page shows.
const MaxCustomerTransfers = 50

// PageLinkStore reads what links the dashboard's pages (part of DashboardStore).
type PageLinkStore interface {
	// TransactionLinks returns the link of each of the tenant's
	// transactions among ids (another tenant's ids are left out; a
	// transaction with no decision and no exception has a zero link).
	TransactionLinks(ctx context.Context, tenant TenantID, ids []int64) (map[int64]TransactionLink, error)
	// TransactionsByID returns the tenant's transactions among ids, newest
	// first (another tenant's are left out).
	TransactionsByID(ctx context.Context, tenant TenantID, ids []int64) ([]*Transaction, error)
	// OrderInvoices returns the invoice number of each of the tenant's
	// orders among ids (another tenant's are left out).
	OrderInvoices(ctx context.Context, tenant TenantID, ids []int64) (map[int64]string, error)
	// CustomerTransactions returns up to limit of the tenant's transfers
	// that a decision matched to an order of the customer (Order.CustomerID),
	// newest decision first.
	CustomerTransactions(ctx context.Context, tenant TenantID, customerID string, limit int) ([]*Transaction, error)
	// CountDeliveries counts the tenant's deliveries that pass f (its
	// Limit and BeforeID unused), up to bound.
	CountDeliveries(ctx context.Context, tenant TenantID, f DeliveryFilter, bound int) (int64, error)
}
