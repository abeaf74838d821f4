package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"recon"
)

// Test mode (recon.TenantStore): a company's test tenant is a row of
// companies whose test_of names the company (migration 00008). Every read of
// a company's settings through a tenant id joins the live row: tenantCompany
// is that join, `c` the tenant's row and `p` the company's.
const tenantCompany = `companies c JOIN companies p ON p.id = COALESCE(c.test_of, c.id)`

var _ recon.TenantStore = (*DB)(nil)

// Tenant returns the tenant whose rows carry company_id id, with the
// company's status, or ENOTFOUND.
func (db *DB) Tenant(ctx context.Context, id int64) (*recon.Tenant, error) {
	var t recon.Tenant
	var live bool
	err := db.db.QueryRowContext(ctx, `SELECT p.id, c.test_of IS NULL, p.status FROM `+tenantCompany+` WHERE c.id = $1`, id).
		Scan(&t.Company, &live, &t.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "company %d not found", id)
	}
	if err != nil {
		return nil, internal(err, "read tenant")
	}
	t.ID = recon.TenantFromRow(id, live)
	return &t, nil
}

// TenantOf returns the company's live or test tenant, or ENOTFOUND.
func (db *DB) TenantOf(ctx context.Context, companyID int64, live bool) (*recon.Tenant, error) {
	query := `SELECT id, id, status FROM companies WHERE id = $1 AND test_of IS NULL`
	if !live {
		query = `SELECT c.id, p.id, p.status FROM companies p JOIN companies c ON c.test_of = p.id WHERE p.id = $1`
	}
	var t recon.Tenant
	var id int64
	err := db.db.QueryRowContext(ctx, query, companyID).Scan(&id, &t.Company, &t.Status)
	if errors.Is(err, sql.ErrNoRows) {
		if live {
			return nil, notFound(err, "company %d not found", companyID)
		}
		return nil, notFound(err, "company %d has no test mode yet", companyID)
	}
	if err != nil {
		return nil, internal(err, "read tenant")
	}
	t.ID = recon.TenantFromRow(id, live)
	return &t, nil
}

// TestTenant returns the company's test tenant, making it on first use. Two
// calls at once make one: the unique index on test_of keeps the other insert
// out, and both read the one row.
func (db *DB) TestTenant(ctx context.Context, companyID int64) (*recon.Tenant, error) {
	live, err := db.Tenant(ctx, companyID)
	if err != nil {
		return nil, err
	}
	if !live.Live() {
		return nil, recon.Errorf(recon.EINVALID, "company %d is the test tenant of company %d, not a company", companyID, live.Company)
	}
	t := recon.Tenant{Company: companyID, Status: live.Status}
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
			INSERT INTO companies (full_name, short_name, status, subscription, begin_date, end_date,
				bank_sub_account, paycode, data_storage_days, created_at, test_of)
			SELECT full_name, short_name, status, subscription, begin_date, end_date,
				bank_sub_account, paycode, data_storage_days, $2, id
			FROM companies WHERE id = $1
			ON CONFLICT (test_of) WHERE test_of IS NOT NULL DO NOTHING`, companyID, db.now())
		if err != nil {
			return err
		}
		id, err = db.testTenantID(ctx, tx, companyID)
		return err
	})
	if err != nil {
		return nil, internal(err, "make test tenant")
	}
	if id == 0 { // the company was deleted meanwhile
		return nil, notFound(nil, "company %d not found", companyID)
	}
	t.ID = recon.TenantFromRow(id, false)
	return &t, nil
}

// testTenantID returns the id of the company's test tenant, 0 when it has
// none (yet).
func (db *DB) testTenantID(ctx context.Context, q querier, companyID int64) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM companies WHERE test_of = $1`, companyID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// WipeTestData deletes the company's test data in one transaction (see
// recon.TenantStore). The tenant row stays, and with it the test
// credentials and notification settings.
func (db *DB) WipeTestData(ctx context.Context, companyID int64) (*recon.WipeResult, error) {
	live, err := db.Tenant(ctx, companyID)
	if err != nil {
		return nil, err
	}
	if !live.Live() {
		return nil, recon.Errorf(recon.EINVALID, "company %d is the test tenant of company %d: name the company", companyID, live.Company)
	}
	var res recon.WipeResult
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		tenant, err := db.testTenantID(ctx, tx, companyID)
		if err != nil || tenant == 0 {
			return err
		}
		// The tenant's accounts are locked first, as every ingestion and
		// retention of an account locks it, so that the counts deleted
		// below are those of the transactions deleted, and so that the
		// wipe never holds count rows an ingestion upserts while waiting
		// for the account that ingestion holds (a deadlock on PostgreSQL).
		if _, err := tx.ExecContext(ctx, `SELECT id FROM bank_accounts WHERE company_id = $1 ORDER BY id`+db.d.forUpdate(), tenant); err != nil {
			return err
		}
		// Children first, each counted where it is counted. Attempts,
		// match decisions and discontinuities go with their parents (ON
		// DELETE CASCADE); the per-day and per-amount counts have no
		// foreign key.
		// The sync log says every transaction wiped is removed; the
		// tenant's older changes go (sqlstore/sync.go).
		var removed changeSet
		rows, err := tx.QueryContext(ctx, `SELECT id FROM transactions WHERE company_id = $1 ORDER BY id`, tenant)
		ids, err := collect(rows, err, "wipe test data", func(s scanner) (*int64, error) {
			var id int64
			return &id, s.Scan(&id)
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			removed.add(recon.ChangeRemoved, *id)
		}
		steps := []struct {
			table string
			n     *int64
		}{
			{"refunds", nil}, // their allocations go with them
			{"deliveries", &res.Deliveries},
			{"orders", &res.Orders},
			{"transaction_day_counts", nil},
			{"transaction_account_counts", nil}, // after the day rows, whose triggers count down to them
			{"transaction_bucket_counts", nil},
			{"transaction_amount_counts", nil},
			{"transaction_changes", nil},
			{"transactions", &res.Transactions},
			{"bank_accounts", &res.BankAccounts},
			{"hub_events", nil},
			{"hub_link_sessions", nil},
			{"hub_link_tokens", nil},
			{"hub_customers", &res.HubCompanies},
		}
		for _, s := range steps {
			r, err := tx.ExecContext(ctx, `DELETE FROM `+s.table+` WHERE company_id = $1`, tenant)
			if err != nil {
				return err
			}
			if s.n != nil {
				if *s.n, err = r.RowsAffected(); err != nil {
					return err
				}
			}
		}
		return db.stampChanges(ctx, tx, tenant, removed, db.now()) // last: see sqlstore/sync.go
	})
	if err != nil {
		return nil, internal(err, "wipe test data")
	}
	return &res, nil
}

// ownCompany returns EINVALID when id is a test tenant's: users and OAuth2
// clients belong to the company itself (a test client is marked Test), and
// ENOTFOUND when there is no such company.
func (db *DB) ownCompany(ctx context.Context, id int64) error {
	t, err := db.Tenant(ctx, id)
	if err != nil {
		return err
	}
	if !t.Live() {
		return recon.Errorf(recon.EINVALID, "%d is the test tenant of company %d: users and OAuth2 clients belong to company %d (a test client is one made with --test)", id, t.Company, t.Company)
	}
	return nil
}

// liveCompany returns EINVALID when id is a test tenant's (whose settings
// are the company's) and ENOTFOUND when there is no such row.
func liveCompany(ctx context.Context, q querier, id int64) error {
	var testOf sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT test_of FROM companies WHERE id = $1`, id).Scan(&testOf)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(err, "company %d not found", id)
	}
	if err != nil {
		return internal(err, "read company")
	}
	if testOf.Valid {
		return recon.Errorf(recon.EINVALID, "the settings of company %d are shared by its live and test modes: change them in live mode", testOf.Int64)
	}
	return nil
}

// ListenSecret returns the tenant's listen signing secret, made on first
// use: a row of delivery_targets of the pseudo-kind recon.ListenKind,
// which no delivery has and no API shows, so that it is sealed and
// re-sealed (recon keys rotate) with the other secrets.
func (db *DB) ListenSecret(ctx context.Context, tenant recon.TenantID) (string, error) {
	companyID := tenant.ID()
	t, err := db.DeliveryTarget(ctx, companyID, recon.ListenKind)
	if recon.ErrorCode(err) != recon.ENOTFOUND {
		if err != nil {
			return "", err
		}
		return t.SigningSecret, nil
	}
	// DO NOTHING on a conflict: two first listeners agree on the one stored.
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		none, err := db.sealSecret(ctx, tx, targetBinding("secret", companyID, recon.ListenKind), "")
		if err != nil {
			return err
		}
		signing, err := db.sealSecret(ctx, tx, targetBinding("signing_secret", companyID, recon.ListenKind), recon.NewSecretFrom(db.rand))
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO delivery_targets (company_id, kind, url, auth_type, secret, signing_secret, active, settings, updated_at)
			VALUES ($1, $2, '', $3, $4, $5, false, '{}', $6)
			ON CONFLICT (company_id, kind) DO NOTHING`,
			companyID, recon.ListenKind, recon.AuthNone, none, signing, db.now())
		return err
	})
	if err != nil {
		return "", internal(err, "make a listen secret")
	}
	if t, err = db.DeliveryTarget(ctx, companyID, recon.ListenKind); err != nil {
		return "", err
	}
	return t.SigningSecret, nil
}

// ListenDeliveries returns up to limit of the tenant's deliveries with an
// id above after that are pending or were created at or after since, the
// newest ones when there are more, in id order.
func (db *DB) ListenDeliveries(ctx context.Context, tenant recon.TenantID, after int64, since time.Time, limit int) ([]*recon.Delivery, error) {
	companyID := tenant.ID()
	rows, err := db.db.QueryContext(ctx, selectDelivery+`
		WHERE company_id = $1 AND id > $2 AND (status = 'pending' OR created_at >= $3)
		ORDER BY id DESC LIMIT $4`, companyID, after, storedTime(since), limit)
	if err != nil {
		return nil, internal(err, "list pending deliveries")
	}
	list, err := scanDeliveries(rows)
	if err != nil {
		return nil, internal(err, "list pending deliveries")
	}
	slices.Reverse(list)
	return list, nil
}
