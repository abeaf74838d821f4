package sqlstore

import (
	"context"

	"recon"
)

// OrderByID returns the tenant's order with the internal id, or ENOTFOUND:
// the dashboard links a refund (recon.Refund.OrderID) to its order's page.
func (db *DB) OrderByID(ctx context.Context, tenant recon.TenantID, id int64) (*recon.Order, error) {
	return orderBy(ctx, db.db, `company_id = $1 AND id = $2`, "", tenant.ID(), id)
}
