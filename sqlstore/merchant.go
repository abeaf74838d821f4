package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"recon"
)

// SetMerchant creates or replaces the company's gateway credentials; the
// secret key is stored sealed.
func (db *DB) SetMerchant(ctx context.Context, m *recon.Merchant) error {
	companyID := m.Tenant.ID()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		sealed, err := db.sealSecret(ctx, tx, merchantBinding(companyID), m.SecretKey)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO merchants (company_id, merchant_id, secret_key, created_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (company_id) DO UPDATE SET merchant_id = excluded.merchant_id, secret_key = excluded.secret_key`,
			companyID, m.MerchantID, sealed, db.now())
		switch db.d.violation(err) {
		case uniqueViolation:
			return conflict(err, "merchant id %q is taken", m.MerchantID)
		case foreignKeyViolation:
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "set merchant")
		}
		return nil
	})
}

// MerchantByID returns the merchant with the public id, or ENOTFOUND.
func (db *DB) MerchantByID(ctx context.Context, merchantID string) (*recon.Merchant, error) {
	return db.merchant(ctx, `WHERE m.merchant_id = $1`, merchantID)
}

// MerchantOf returns the company's merchant, or ENOTFOUND.
func (db *DB) MerchantOf(ctx context.Context, tenant recon.TenantID) (*recon.Merchant, error) {
	companyID := tenant.ID()
	return db.merchant(ctx, `WHERE m.company_id = $1`, companyID)
}

func (db *DB) merchant(ctx context.Context, where string, arg any) (*recon.Merchant, error) {
	var m recon.Merchant
	var sealed []byte
	var companyID int64
	var live bool
	err := db.db.QueryRowContext(ctx, `SELECT m.company_id, m.merchant_id, m.secret_key, c.test_of IS NULL
		FROM merchants m JOIN companies c ON c.id = m.company_id `+where, arg).
		Scan(&companyID, &m.MerchantID, &sealed, &live)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(err, "merchant not found")
	}
	if err != nil {
		return nil, internal(err, "read merchant")
	}
	m.Tenant = recon.TenantFromRow(companyID, live)
	if m.SecretKey, err = db.openSecret(ctx, merchantBinding(companyID), sealed); err != nil {
		return nil, err
	}
	return &m, nil
}

// SetIPN implements recon.MerchantStore; its secrets are stored sealed.
func (db *DB) SetIPN(ctx context.Context, tenant recon.TenantID, t *recon.Target) error {
	companyID := tenant.ID()
	return db.setTarget(ctx, companyID, recon.DeliveryIPN, t)
}

// setTarget upserts the target. A secret left empty keeps the stored one
// (the signing secret; the secret of a SECRET_KEY target that stays one) or,
// without one, is made here: the choice is the upsert's own, under the row's
// lock, so two saves at once agree on what is stored, and t gets it back.
// Settings left empty keep the stored ones ("{}" for a new target) the same
// way: a save that does not touch them (a rotation, a v1 PUT /v1/ipn
// without notification_types) never resets them.
func (db *DB) setTarget(ctx context.Context, companyID int64, kind string, t *recon.Target) error {
	secret, signing := t.Secret, t.SigningSecret
	keepSecret := secret == "" && t.AuthType == recon.AuthSecretKey
	if keepSecret {
		secret = recon.NewSecretFrom(db.rand)
	}
	keepSigning := signing == ""
	if keepSigning {
		signing = recon.NewSecretFrom(db.rand)
	}
	settings, keepSettings := t.Settings, t.Settings == ""
	if keepSettings {
		settings = "{}"
	}
	var stored, storedSigning []byte
	var storedSettings string
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		sealed, err := db.sealSecret(ctx, tx, targetBinding("secret", companyID, kind), secret)
		if err != nil {
			return err
		}
		sealedSigning, err := db.sealSecret(ctx, tx, targetBinding("signing_secret", companyID, kind), signing)
		if err != nil {
			return err
		}
		kept := signing
		if keepSigning {
			kept = "" // the stored one, if any
		}
		previous, until, err := db.keepPrevious(ctx, tx, companyID, kind, t, kept)
		if err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, `
			INSERT INTO delivery_targets (company_id, kind, url, auth_type, secret, signing_secret, active, settings, updated_at, ordered,
				previous_signing_secret, previous_signing_until)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $13, $14, $15)
			ON CONFLICT (company_id, kind) DO UPDATE SET url = excluded.url, auth_type = excluded.auth_type,
				secret = CASE WHEN $10 AND delivery_targets.auth_type = 'SECRET_KEY' AND delivery_targets.secret IS NOT NULL
					THEN delivery_targets.secret ELSE excluded.secret END,
				signing_secret = CASE WHEN $11 AND delivery_targets.signing_secret IS NOT NULL
					THEN delivery_targets.signing_secret ELSE excluded.signing_secret END,
				active = excluded.active,`+reenableOnSave+`
				settings = CASE WHEN $12 THEN delivery_targets.settings ELSE excluded.settings END,
				updated_at = excluded.updated_at, ordered = excluded.ordered,
				previous_signing_secret = excluded.previous_signing_secret, previous_signing_until = excluded.previous_signing_until
			RETURNING secret, signing_secret, settings`,
			companyID, kind, t.URL, t.AuthType, sealed, sealedSigning, t.Active, settings, db.now(), keepSecret, keepSigning, keepSettings, t.Ordered,
			previous, until,
		).Scan(&stored, &storedSigning, &storedSettings)
		if db.d.violation(err) == foreignKeyViolation {
			return notFound(err, "company %d not found", companyID)
		}
		if err != nil {
			return internal(err, "set delivery target")
		}
		if err := db.saveTargetOrdered(ctx, tx, companyID, kind, t.Ordered); err != nil {
			return internal(err, "set delivery target")
		}
		return nil
	})
	if err != nil {
		return err
	}
	t.Settings = storedSettings
	if t.Secret, err = db.openSecret(ctx, targetBinding("secret", companyID, kind), stored); err != nil {
		return err
	}
	t.SigningSecret, err = db.openSecret(ctx, targetBinding("signing_secret", companyID, kind), storedSigning)
	return err
}

// ensureSigningSecret gives the company's target of the kind a signing
// secret if it has none (targets saved before migration 00005): carry, the
// secret it was signed under until then (a SECRET_KEY target's own secret,
// which its receiver already verifies with), or a new one (a NONE target was
// signed under the empty key, which proves nothing). Concurrent callers
// agree: only the first write lands.
func (db *DB) ensureSigningSecret(ctx context.Context, companyID int64, kind, carry string) error {
	if carry == "" {
		carry = recon.NewSecretFrom(db.rand)
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		sealed, err := db.sealSecret(ctx, tx, targetBinding("signing_secret", companyID, kind), carry)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx,
			`UPDATE delivery_targets SET signing_secret = $1 WHERE company_id = $2 AND kind = $3 AND signing_secret IS NULL`,
			sealed, companyID, kind); err != nil {
			return internal(err, "make a signing secret")
		}
		return nil
	})
}
