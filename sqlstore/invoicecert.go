package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// Invoice certificates (docs/invoices.md, XML and its signature): one per
// tenant, its private key sealed bound to the row (sealBinding).

func invoiceCertBinding(companyID int64) sealBinding {
	return sealBinding{table: "invoice_certificates", column: "private_key", companyID: companyID}
}

// SaveInvoiceCertificate stores c as the tenant's invoice certificate,
// replacing the one there, or with onlyIfNone keeping it; it returns the
// certificate the tenant now has.
func (db *DB) SaveInvoiceCertificate(ctx context.Context, tenant recon.TenantID, c *recon.InvoiceCertificate, onlyIfNone bool) (*recon.InvoiceCertificate, error) {
	companyID := tenant.ID()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		sealed, err := db.sealSecret(ctx, tx, invoiceCertBinding(companyID), c.PrivateKey)
		if err != nil {
			return err
		}
		onConflict := `DO UPDATE SET private_key = excluded.private_key, certificates = excluded.certificates,
			subject = excluded.subject, serial_number = excluded.serial_number, not_before = excluded.not_before,
			not_after = excluded.not_after, self_signed = excluded.self_signed, created_at = excluded.created_at`
		if onlyIfNone {
			onConflict = `DO NOTHING`
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO invoice_certificates (company_id, private_key, certificates, subject,
			serial_number, not_before, not_after, self_signed, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (company_id) `+onConflict,
			companyID, sealed, c.Certificates, c.Subject, c.SerialNumber, storedTime(c.NotBefore), storedTime(c.NotAfter),
			c.SelfSigned, db.now())
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "save the invoice certificate")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return db.InvoiceCertificate(ctx, tenant)
}

// InvoiceCertificate returns the tenant's invoice certificate with its key
// opened, or ENOTFOUND.
func (db *DB) InvoiceCertificate(ctx context.Context, tenant recon.TenantID) (*recon.InvoiceCertificate, error) {
	companyID := tenant.ID()
	c := &recon.InvoiceCertificate{CompanyID: companyID}
	var sealed []byte
	err := db.db.QueryRowContext(ctx, `SELECT private_key, certificates, subject, serial_number, not_before, not_after,
		self_signed, created_at FROM invoice_certificates WHERE company_id = $1`, companyID).
		Scan(&sealed, &c.Certificates, &c.Subject, &c.SerialNumber, &c.NotBefore, &c.NotAfter, &c.SelfSigned, &c.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "the company has no invoice certificate")
	}
	if err != nil {
		return nil, internal(err, "read the invoice certificate")
	}
	if c.PrivateKey, err = db.openSecret(ctx, invoiceCertBinding(companyID), sealed); err != nil {
		return nil, err
	}
	c.NotBefore, c.NotAfter, c.CreatedAt = c.NotBefore.UTC(), c.NotAfter.UTC(), c.CreatedAt.UTC()
	return c, nil
}
