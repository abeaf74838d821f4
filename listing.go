package recon

import "context"

type listingKey struct{}

// Listing marks ctx as a listing's: a read of a list page (its rows and its
// count) that a store may answer from a PostgreSQL standby no further behind
// the primary than the operator's bound (docs/design.md, "Reads from a
// standby"). The surfaces mark their list endpoints and pages only; a read
// that must see a write just made (a detail after a create, matching, the
// reads inside a write) is never marked and always reads the primary.
func Listing(ctx context.Context) context.Context {
	return context.WithValue(ctx, listingKey{}, true)
}

// IsListing reports whether ctx was marked by Listing.
func IsListing(ctx context.Context) bool {
	on, _ := ctx.Value(listingKey{}).(bool)
	return on
}
