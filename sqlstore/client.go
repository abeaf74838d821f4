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
		if _, err := db.TestTenant(ctx, c.Company); err != nil {
			return err
		}
	} else if err := db.ownCompany(ctx, c.Company); err != nil {
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
	_, err = db.execWrite(ctx, `
		INSERT INTO oauth_clients (id, company_id, name, secret_hash, scopes, redirect_uris, test, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.Company, c.Name, c.SecretHash, scopes, uris, c.Test, createdAt)
	switch db.d.violation(err) {
	case uniqueViolation:
		return conflict(err, "a client with id %q already exists", c.ID)
	case foreignKeyViolation:
		return notFound(err, "company %d not found", c.Company)
	}
	if err != nil {
		return internal(err, "create client")
	}
	c.CreatedAt = createdAt
	return nil
}

// Client returns the client with the given id, or ENOTFOUND.
func (db *DB) Client(ctx context.Context, id string) (*recon.Client, error) {
	c, err := scanClient(db.db.QueryRowContext(ctx, selectClient+` WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "client %q not found", id)
	}
	if err != nil {
		return nil, internal(err, "read client")
	}
	return c, nil
}

const selectClient = `SELECT id, company_id, name, secret_hash, scopes, redirect_uris, test, created_at FROM oauth_clients`

// Clients implements recon.ClientStore: the company's clients of one mode,
// oldest first (index oauth_clients (company_id, id) finds them).
func (db *DB) Clients(ctx context.Context, companyID int64, test bool, offset, limit int) ([]*recon.Client, int64, error) {
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM oauth_clients WHERE company_id = $1 AND test = $2`, companyID, test).Scan(&total); err != nil {
		return nil, 0, internal(err, "count clients")
	}
	rows, err := db.db.QueryContext(ctx, selectClient+` WHERE company_id = $1 AND test = $2 ORDER BY created_at, id LIMIT $3 OFFSET $4`,
		companyID, test, limit, offset)
	out, err := collect(rows, err, "list clients", scanClient)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// DeleteClient implements recon.ClientStore. The client's tokens go with it
// (foreign key ON DELETE CASCADE), and the triggers of migration 00012 move
// the authentication epoch in the same transaction, so every node refuses
// them at the next request.
func (db *DB) DeleteClient(ctx context.Context, companyID int64, test bool, id string) error {
	res, err := db.execWrite(ctx, `DELETE FROM oauth_clients WHERE company_id = $1 AND test = $2 AND id = $3`, companyID, test, id)
	if err != nil {
		return internal(err, "delete client")
	}
	if n, err := res.RowsAffected(); err != nil {
		return internal(err, "delete client")
	} else if n == 0 {
		return notFound(nil, "client %q not found", id)
	}
	return nil
}

func scanClient(row scanner) (*recon.Client, error) {
	var (
		c            recon.Client
		scopes, uris string
	)
	if err := row.Scan(&c.ID, &c.Company, &c.Name, &c.SecretHash, &scopes, &uris, &c.Test, &c.CreatedAt); err != nil {
		return nil, err
	}
	c.Scopes, c.RedirectURIs = splitList(scopes), splitURIs(uris)
	c.CreatedAt = c.CreatedAt.UTC()
	return &c, nil
}
