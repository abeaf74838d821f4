package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"recon"
)

// The previous signing secret of a delivery target (docs/design.md, D7,
// "Standard Webhooks."; migration 00043): what a rotation replaced, sealed
// like the signing secret and bound to its own column, with the end of its
// validity. A save decides it under the row's lock (recon.Target.KeepPrevious
// at the store's clock); a read drops it once it has expired.

// previousColumns are the columns a target's read selects for it, after
// the others.
const previousColumns = `, previous_signing_secret, previous_signing_until`

// openPrevious sets t's previous signing secret from the stored columns
// (sealed, until): none when there is none, or no longer at the store's now.
func (db *DB) openPrevious(ctx context.Context, companyID int64, kind string, t *recon.Target, sealed []byte, until anyTime) error {
	t.PreviousSigningSecret, t.PreviousSigningUntil = "", time.Time{}
	if len(sealed) == 0 || !db.now().Before(until.t) {
		return nil
	}
	t.PreviousSigningUntil = until.t
	var err error
	t.PreviousSigningSecret, err = db.openSecret(ctx, targetBinding("previous_signing_secret", companyID, kind), sealed)
	return err
}

// keepPrevious sets t's previous signing secret as a save of t at the
// store's now leaves it (recon.Target.KeepPrevious), from the stored row,
// read within tx under its lock; signing is the signing secret the save
// stores ("" when the row is new and t has none yet). It returns the
// columns' new values: NULLs when there is none.
func (db *DB) keepPrevious(ctx context.Context, tx *sql.Tx, companyID int64, kind string, t *recon.Target, signing string) (sealed, until any, err error) {
	var storedSigning, storedPrevious []byte
	var storedUntil anyTime
	err = tx.QueryRowContext(ctx, `SELECT signing_secret`+previousColumns+` FROM delivery_targets
		WHERE company_id = $1 AND kind = $2`+db.d.forUpdate(), companyID, kind).Scan(&storedSigning, &storedPrevious, &storedUntil)
	var old *recon.Target
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, nil, internal(err, "read delivery target")
	case len(storedSigning) > 0:
		old = &recon.Target{}
		if old.SigningSecret, err = db.openSecret(ctx, targetBinding("signing_secret", companyID, kind), storedSigning); err != nil {
			return nil, nil, err
		}
		if err := db.openPrevious(ctx, companyID, kind, old, storedPrevious, storedUntil); err != nil {
			return nil, nil, err
		}
	}
	next := *t
	next.SigningSecret = signing
	if signing == "" && old != nil {
		next.SigningSecret = old.SigningSecret // kept by the save
	}
	next.KeepPrevious(old, db.now())
	t.PreviousSigningSecret, t.PreviousSigningUntil = next.PreviousSigningSecret, next.PreviousSigningUntil
	if t.PreviousSigningSecret == "" {
		return nil, nil, nil
	}
	if sealed, err = db.sealSecret(ctx, tx, targetBinding("previous_signing_secret", companyID, kind), t.PreviousSigningSecret); err != nil {
		return nil, nil, err
	}
	return sealed, storedTime(t.PreviousSigningUntil), nil
}
