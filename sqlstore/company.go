package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// CreateCompany stores c, with its payment-code formats, and sets c.ID and c.CreatedAt.
func (db *DB) CreateCompany(ctx context.Context, c *recon.Company) error {
	begin, err := dateArg("begin_date", c.BeginDate)
	if err != nil {
		return err
	}
	end, err := dateArg("end_date", c.EndDate)
	if err != nil {
		return err
	}
	inv := c.Config.Invoicing
	if inv.Template == "" {
		inv.Template = recon.InvoiceTemplateVAT
	}
	sl := c.Config.Seller
	createdAt := db.now()
	var id int64
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			INSERT INTO companies (full_name, short_name, status, subscription, begin_date, end_date,
				bank_sub_account, paycode, data_storage_days, created_at,
				seller_legal_name, seller_tax_code, seller_address, seller_phone, seller_email,
				seller_bank_name, seller_bank_account, invoice_template, invoice_series, auto_invoice)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
			RETURNING id`,
			c.FullName, c.ShortName, c.Status, c.Subscription, begin, end,
			c.Config.BankSubAccount, c.Config.Paycode, c.Config.DataStorageDays, createdAt,
			sl.LegalName, sl.TaxCode, sl.Address, sl.Phone, sl.Email, sl.BankName, sl.BankAcct,
			inv.Template, inv.Series, inv.AutoInvoice,
		).Scan(&id)
		if err != nil {
			return internal(err, "create company")
		}
		return insertFormats(ctx, tx, db.d, id, c.Config.PaymentCodeFormats)
	})
	if err != nil {
		return err
	}
	c.ID, c.CreatedAt, c.Config.Invoicing.Template = id, createdAt, inv.Template
	return nil
}

// Company returns the company with the given id and its payment-code formats
// in position order, or ENOTFOUND. A test tenant's id reads the live
// company's record (see recon.CompanyStore).
func (db *DB) Company(ctx context.Context, id int64) (*recon.Company, error) {
	c, _, err := db.CompanyAtEpoch(ctx, id)
	return c, err
}

// CompanyAtEpoch implements recon.CompanyStore: Company, and the
// authentication epoch read in the same snapshot.
func (db *DB) CompanyAtEpoch(ctx context.Context, id int64) (*recon.Company, int64, error) {
	// One statement, so that the company, its formats and the epoch come
	// from one snapshot.
	rows, err := db.db.QueryContext(ctx, `
		SELECT (SELECT n FROM auth_epoch WHERE id = 1), c.id, COALESCE(c.test_of, 0), p.full_name, p.short_name, p.status, p.subscription, p.begin_date, p.end_date,
			p.bank_sub_account, p.paycode, p.data_storage_days, p.created_at,
			p.seller_legal_name, p.seller_tax_code, p.seller_address, p.seller_phone, p.seller_email,
			p.seller_bank_name, p.seller_bank_account, p.invoice_template, p.invoice_series, p.auto_invoice, p.duplicate_window_days,
			f.prefix, f.suffix_from, f.suffix_to, f.character_type, f.is_active
		FROM `+tenantCompany+`
		LEFT JOIN payment_code_formats f ON f.company_id = p.id
		WHERE c.id = $1
		ORDER BY f.position`, id)
	if err != nil {
		return nil, 0, internal(err, "read company")
	}
	defer rows.Close()
	var c *recon.Company
	var epoch int64
	for rows.Next() {
		var (
			row        recon.Company
			begin, end sql.NullTime
			prefix     sql.NullString
			ctype      sql.NullString
			from, to   sql.NullInt64
			active     sql.NullBool
		)
		err := rows.Scan(&epoch, &row.ID, &row.TestOf, &row.FullName, &row.ShortName, &row.Status, &row.Subscription, &begin, &end,
			&row.Config.BankSubAccount, &row.Config.Paycode, &row.Config.DataStorageDays, &row.CreatedAt,
			&row.Config.Seller.LegalName, &row.Config.Seller.TaxCode, &row.Config.Seller.Address, &row.Config.Seller.Phone,
			&row.Config.Seller.Email, &row.Config.Seller.BankName, &row.Config.Seller.BankAcct,
			&row.Config.Invoicing.Template, &row.Config.Invoicing.Series, &row.Config.Invoicing.AutoInvoice, &row.Config.DuplicateWindowDays,
			&prefix, &from, &to, &ctype, &active)
		if err != nil {
			return nil, 0, internal(err, "read company")
		}
		if c == nil {
			row.BeginDate, row.EndDate = dateText(begin), dateText(end)
			row.CreatedAt = row.CreatedAt.UTC()
			c = &row
		}
		if prefix.Valid {
			c.Config.PaymentCodeFormats = append(c.Config.PaymentCodeFormats, recon.PaymentCodeFormat{
				Prefix: prefix.String, SuffixFrom: int(from.Int64), SuffixTo: int(to.Int64),
				CharacterType: recon.CharacterType(ctype.String), IsActive: active.Bool,
			})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, internal(err, "read company")
	}
	if c == nil {
		return nil, 0, notFound(sql.ErrNoRows, "company %d not found", id)
	}
	return c, epoch, nil
}

const companyColumns = `id, full_name, short_name, status, subscription, begin_date, end_date,
	bank_sub_account, paycode, data_storage_days, created_at,
	seller_legal_name, seller_tax_code, seller_address, seller_phone, seller_email,
	seller_bank_name, seller_bank_account, invoice_template, invoice_series, auto_invoice, duplicate_window_days`

// scanCompany reads one row of companyColumns.
func scanCompany(row scanner) (*recon.Company, error) {
	var c recon.Company
	var begin, end sql.NullTime
	if err := row.Scan(&c.ID, &c.FullName, &c.ShortName, &c.Status, &c.Subscription, &begin, &end,
		&c.Config.BankSubAccount, &c.Config.Paycode, &c.Config.DataStorageDays, &c.CreatedAt,
		&c.Config.Seller.LegalName, &c.Config.Seller.TaxCode, &c.Config.Seller.Address, &c.Config.Seller.Phone,
		&c.Config.Seller.Email, &c.Config.Seller.BankName, &c.Config.Seller.BankAcct,
		&c.Config.Invoicing.Template, &c.Config.Invoicing.Series, &c.Config.Invoicing.AutoInvoice, &c.Config.DuplicateWindowDays); err != nil {
		return nil, err
	}
	c.BeginDate, c.EndDate = dateText(begin), dateText(end)
	c.CreatedAt = c.CreatedAt.UTC()
	return &c, nil
}

// Companies lists every company (test tenants left out) in id order, without payment-code formats.
func (db *DB) Companies(ctx context.Context) ([]*recon.Company, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+companyColumns+` FROM companies WHERE test_of IS NULL ORDER BY id`)
	if err != nil {
		return nil, internal(err, "list companies")
	}
	defer rows.Close()
	list := []*recon.Company{}
	for rows.Next() {
		c, err := scanCompany(rows)
		if err != nil {
			return nil, internal(err, "list companies")
		}
		list = append(list, c)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "list companies")
	}
	return list, nil
}

// UpdateCompany implements recon.CompanyStore: it locks the company's row,
// applies update to it and writes every scalar field back in the same
// transaction. Formats are read (update sees them) but never written.
func (db *DB) UpdateCompany(ctx context.Context, id int64, update func(c *recon.Company) error) (*recon.Company, error) {
	var out *recon.Company
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := liveCompany(ctx, tx, id); err != nil {
			return err
		}
		c, err := scanCompany(tx.QueryRowContext(ctx, `SELECT `+companyColumns+` FROM companies WHERE id = $1`+db.d.forUpdate(), id))
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "company %d not found", id)
		}
		if err != nil {
			return internal(err, "update company")
		}
		if c.Config.PaymentCodeFormats, err = readFormats(ctx, tx, id); err != nil {
			return err
		}
		formats, createdAt := c.Config.PaymentCodeFormats, c.CreatedAt
		if err := update(c); err != nil {
			return err
		}
		begin, err := dateArg("begin_date", c.BeginDate)
		if err != nil {
			return err
		}
		end, err := dateArg("end_date", c.EndDate)
		if err != nil {
			return err
		}
		if err := c.Config.ValidateInvoicing(); err != nil {
			return err
		}
		if err := recon.CheckDuplicateWindow(c.Config.DuplicateWindowDays); err != nil {
			return err
		}
		sl := c.Config.Seller
		_, err = tx.ExecContext(ctx, `
			UPDATE companies SET full_name = $1, short_name = $2, status = $3, subscription = $4,
				begin_date = $5, end_date = $6, bank_sub_account = $7, paycode = $8, data_storage_days = $9,
				seller_legal_name = $10, seller_tax_code = $11, seller_address = $12, seller_phone = $13,
				seller_email = $14, seller_bank_name = $15, seller_bank_account = $16,
				invoice_template = $17, invoice_series = $18, auto_invoice = $19, duplicate_window_days = $20
			WHERE id = $21`,
			c.FullName, c.ShortName, c.Status, c.Subscription, begin, end,
			c.Config.BankSubAccount, c.Config.Paycode, c.Config.DataStorageDays,
			sl.LegalName, sl.TaxCode, sl.Address, sl.Phone, sl.Email, sl.BankName, sl.BankAcct,
			c.Config.Invoicing.Template, c.Config.Invoicing.Series, c.Config.Invoicing.AutoInvoice, c.Config.DuplicateWindowDays, id)
		if err != nil {
			return internal(err, "update company")
		}
		c.ID, c.CreatedAt, c.Config.PaymentCodeFormats = id, createdAt, formats
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReplacePaymentCodeFormats replaces the company's formats in one transaction
// and returns its configuration as stored. An unknown company is ENOTFOUND; a
// prefix listed twice is ECONFLICT.
func (db *DB) ReplacePaymentCodeFormats(ctx context.Context, companyID int64, formats []recon.PaymentCodeFormat) (*recon.CompanyConfig, error) {
	var cfg recon.CompanyConfig
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := liveCompany(ctx, tx, companyID); err != nil {
			return err
		}
		// Locking the company row queues concurrent replacements of its formats.
		c, err := scanCompany(tx.QueryRowContext(ctx, `SELECT `+companyColumns+` FROM companies WHERE id = $1`+db.d.forUpdate(), companyID))
		if c != nil {
			cfg = c.Config
		}
		if errors.Is(err, sql.ErrNoRows) {
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "replace payment code formats")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM payment_code_formats WHERE company_id = $1`, companyID); err != nil {
			return internal(err, "replace payment code formats")
		}
		if err := insertFormats(ctx, tx, db.d, companyID, formats); err != nil {
			return err
		}
		cfg.PaymentCodeFormats, err = readFormats(ctx, tx, companyID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// insertFormats stores formats at positions 1, 2, ... of the company.
func insertFormats(ctx context.Context, q querier, d dialect, companyID int64, formats []recon.PaymentCodeFormat) error {
	for i, f := range formats {
		_, err := q.ExecContext(ctx, `
			INSERT INTO payment_code_formats (company_id, position, prefix, suffix_from, suffix_to, character_type, is_active)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			companyID, i+1, f.Prefix, f.SuffixFrom, f.SuffixTo, string(f.CharacterType), f.IsActive)
		switch d.violation(err) {
		case uniqueViolation:
			return conflict(err, "payment code prefix %s is listed twice", f.Prefix)
		case foreignKeyViolation:
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "store payment code format")
		}
	}
	return nil
}

// readFormats returns the company's formats in position order.
func readFormats(ctx context.Context, q querier, companyID int64) ([]recon.PaymentCodeFormat, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT prefix, suffix_from, suffix_to, character_type, is_active
		FROM payment_code_formats WHERE company_id = $1 ORDER BY position`, companyID)
	if err != nil {
		return nil, internal(err, "read payment code formats")
	}
	defer rows.Close()
	var formats []recon.PaymentCodeFormat
	for rows.Next() {
		var f recon.PaymentCodeFormat
		if err := rows.Scan(&f.Prefix, &f.SuffixFrom, &f.SuffixTo, &f.CharacterType, &f.IsActive); err != nil {
			return nil, internal(err, "read payment code formats")
		}
		formats = append(formats, f)
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read payment code formats")
	}
	return formats, nil
}
