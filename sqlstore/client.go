package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// CreateClient stores c and sets c.CreatedAt. An id already taken is
// ECONFLICT; an unknown company is ENOTFOUND. A test client's company gets
// its test tenant (TestTenant) first, so that the client's tokens have data
// to reach.
func (db *DB) CreateClient(ctx context.Context, c *recon.Client) error {
	if c.Test {
		if _, err := db.TestTenant(ctx, c.CompanyID); err != nil {
			return err
		}
	} else if err := db.ownCompany(ctx, c.CompanyID); err != nil {
		return err
	}
	scopes, err := joinList("scopes", c.Scopes)
	if err != nil {
		return err
	}
	uris, err := joinURIs("redirect_uris", c.RedirectURIs)
	if err != nil {
		return err
	}
	createdAt := db.now()
	_, err = db.db.ExecContext(ctx, `
		INSERT INTO oauth_clients (id, company_id, name, secret_hash, scopes, redirect_uris, test, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.CompanyID, c.Name, c.SecretHash, scopes, uris, c.Test, createdAt)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "a client with id %q already exists", c.ID)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", c.CompanyID)
	}
	if err != nil {
		return internal(err, "create client")
	}
	c.CreatedAt = createdAt
	return nil
}

// Client returns the client with the given id, or ENOTFOUND.
func (db *DB) Client(ctx context.Context, id string) (*recon.Client, error) {
	var (
		c            recon.Client
		scopes, uris string
	)
	err := db.db.QueryRowContext(ctx, `
		SELECT id, company_id, name, secret_hash, scopes, redirect_uris, test, created_at
		FROM oauth_clients WHERE id = $1`, id,
	).Scan(&c.ID, &c.CompanyID, &c.Name, &c.SecretHash, &scopes, &uris, &c.Test, &c.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "client %q not found", id)
	}
	if err != nil {
		return nil, internal(err, "read client")
	}
	c.Scopes, c.RedirectURIs = splitList(scopes), splitURIs(uris)
	c.CreatedAt = c.CreatedAt.UTC()
	return &c, nil
}
