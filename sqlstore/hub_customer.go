package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"recon"
)

// The hub's customers (the hub API's "companies"), always scoped by the
// tenant's company id.

var _ recon.HubStore = (*DB)(nil)

const hubCustomerColumns = `id, company_id, (SELECT hc.test_of IS NULL FROM companies hc WHERE hc.id = hub_customers.company_id), xid, full_name, short_name, status, created_at, updated_at`

// CreateHubCustomer implements recon.HubStore.
func (db *DB) CreateHubCustomer(ctx context.Context, c *recon.HubCustomer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	now := db.now()
	xid := recon.NewXIDFrom(db.rand)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			INSERT INTO hub_customers (company_id, xid, full_name, short_name, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
			c.Tenant.ID(), xid, c.FullName, c.ShortName, c.Status, now).Scan(&c.ID)
		switch db.d.violation(err) {
		case uniqueViolation:
			return &recon.Error{Code: recon.ECONFLICT, Message: "a company named " + quote(c.FullName) + " already exists",
				Fields: map[string][]string{"full_name": {"full_name must be unique among your companies"}}, Err: err}
		case foreignKeyViolation:
			return notFound(err, "company %d not found", c.Tenant.ID())
		}
		if err != nil {
			return internal(err, "create hub company")
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.XID, c.CreatedAt, c.UpdatedAt = xid, now, now
	return nil
}

func quote(s string) string { return `"` + s + `"` }

// HubCustomer implements recon.HubStore.
func (db *DB) HubCustomer(ctx context.Context, tenant recon.TenantID, xid string) (*recon.HubCustomer, error) {
	companyID := tenant.ID()
	return hubCustomer(ctx, db.db, companyID, xid, "")
}

func hubCustomer(ctx context.Context, q querier, companyID int64, xid, lock string) (*recon.HubCustomer, error) {
	c, err := scanHubCustomer(q.QueryRowContext(ctx,
		`SELECT `+hubCustomerColumns+` FROM hub_customers WHERE company_id = $1 AND xid = $2`+lock, companyID, strings.ToLower(xid)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "company %s not found", xid)
	}
	if err != nil {
		return nil, internal(err, "read hub company")
	}
	return c, nil
}

func scanHubCustomer(s scanner) (*recon.HubCustomer, error) {
	var c recon.HubCustomer
	var created, updated anyTime
	var companyID int64
	var live bool
	if err := s.Scan(&c.ID, &companyID, &live, &c.XID, &c.FullName, &c.ShortName, &c.Status, &created, &updated); err != nil {
		return nil, err
	}
	c.Tenant = recon.TenantFromRow(companyID, live)
	c.CreatedAt, c.UpdatedAt = created.t, updated.t
	return &c, nil
}

// HubCustomers implements recon.HubStore: newest first (id breaks ties).
func (db *DB) HubCustomers(ctx context.Context, tenant recon.TenantID, f recon.HubCustomerFilter) ([]*recon.HubCustomer, int64, error) {
	companyID := tenant.ID()
	var args queryArgs
	where := `company_id = ` + args.add(companyID)
	if f.Status != "" {
		where += ` AND status = ` + args.add(f.Status)
	}
	if f.Q != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(f.Q)) + "%"
		where += ` AND LOWER(full_name) LIKE ` + args.add(like) + ` ESCAPE '\'`
	}
	var total int64
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM hub_customers WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, internal(err, "count hub companies")
	}
	order := ` ORDER BY created_at DESC, id DESC`
	if f.Ascending {
		order = ` ORDER BY created_at, id`
	}
	page, per := max(f.Page, 1), max(f.PerPage, 1)
	query := `SELECT ` + hubCustomerColumns + ` FROM hub_customers WHERE ` + where + order +
		` LIMIT ` + args.add(per) + ` OFFSET ` + args.add((page-1)*per)
	rows, err := db.db.QueryContext(ctx, query, args...)
	out, err := collect(rows, err, "list hub companies", scanHubCustomer)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// UpdateHubCustomer implements recon.HubStore.
func (db *DB) UpdateHubCustomer(ctx context.Context, tenant recon.TenantID, xid string, fn func(c *recon.HubCustomer) error) (*recon.HubCustomer, error) {
	companyID := tenant.ID()
	var out *recon.HubCustomer
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		c, err := hubCustomer(ctx, tx, companyID, xid, db.d.forUpdate())
		if err != nil {
			return err
		}
		if err := fn(c); err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return err
		}
		c.UpdatedAt = db.now()
		_, err = tx.ExecContext(ctx, `UPDATE hub_customers SET full_name = $1, short_name = $2, status = $3, updated_at = $4
			WHERE company_id = $5 AND id = $6`, c.FullName, c.ShortName, c.Status, c.UpdatedAt, companyID, c.ID)
		if db.d.violation(err) == uniqueViolation {
			return &recon.Error{Code: recon.ECONFLICT, Message: "a company named " + quote(c.FullName) + " already exists",
				Fields: map[string][]string{"full_name": {"full_name must be unique among your companies"}}, Err: err}
		}
		if err != nil {
			return internal(err, "update hub company")
		}
		out = c
		return nil
	})
	return out, err
}

// HubCustomerCounter implements recon.HubStore: it counts the transactions
// of the customer's linked accounts by business day from the per-day counts
// ingestion keeps (transaction_day_counts), one row per account and day
// instead of every transaction. A transfer with no money in counts as out,
// as the hub's counter always did.
func (db *DB) HubCustomerCounter(ctx context.Context, tenant recon.TenantID, xid, date string) (*recon.HubCounter, error) {
	companyID := tenant.ID()
	c, err := db.HubCustomer(ctx, tenant, xid)
	if err != nil {
		return nil, err
	}
	out := &recon.HubCounter{Days: []recon.HubCounterDay{}}
	if err := db.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM bank_accounts WHERE company_id = $1 AND hub_customer_id = $2`,
		companyID, c.ID).Scan(&out.BankAccounts); err != nil {
		return nil, internal(err, "count hub bank accounts")
	}
	var args queryArgs
	where := `d.company_id = ` + args.add(companyID) + ` AND b.hub_customer_id = ` + args.add(c.ID)
	if date != "" {
		day, err := time.Parse(recon.DateLayout, date)
		if err != nil {
			return nil, recon.FieldError("date", "date must be a date in the form YYYY-MM-DD")
		}
		where += ` AND d.day = ` + args.add(dayNumber(day))
	}
	rows, err := db.db.QueryContext(ctx, `
		SELECT d.day, SUM(d.n), SUM(d.in_n) FROM transaction_day_counts d
		JOIN bank_accounts b ON b.company_id = d.company_id AND b.id = d.bank_account_id
		WHERE `+where+` GROUP BY d.day HAVING SUM(d.n) > 0 ORDER BY d.day`, args...)
	if err != nil {
		return nil, internal(err, "count hub transactions")
	}
	defer rows.Close()
	for rows.Next() {
		var day, n, in int64
		if err := rows.Scan(&day, &n, &in); err != nil {
			return nil, internal(err, "count hub transactions")
		}
		d := recon.HubCounterDay{Date: dayDate(day), Transactions: n, In: in, Out: n - in}
		out.Days = append(out.Days, d)
		out.Total.Transactions += n
		out.Total.In += in
		out.Total.Out += n - in
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "count hub transactions")
	}
	return out, nil
}
