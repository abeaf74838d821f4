package apiv2

import (
	"recon"
	"recon/orders"
)

// Store is the storage API v2 needs: each area declares the few methods it
// calls in its own file and adds its interface here.
type Store interface {
	recon.IdempotencyStore
	recon.SyncStore // GET /v2/transactions/sync
	orders.Store    // orders and virtual accounts (the orders service)
	RefundStore
	InvoiceStore // the invoices service's store comes with Config.Invoices
}
