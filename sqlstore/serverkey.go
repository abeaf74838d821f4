package sqlstore

import (
	"context"
	"fmt"
	"io"

	"recon"
)

// WithRand sets the source of the random bytes the store draws (default:
// crypto/rand): server keys, secret keys and sealing nonces, the secrets
// it makes for targets, and the hub's xids. Tests may pass a fixed reader; production must not.
func WithRand(r io.Reader) Option { return func(db *DB) { db.rand = r } }

// ServerKey returns the secret named name, generating size random bytes the
// first time any process asks. Only keys whose theft with a copy of the
// database gives nothing away may live here; today that is the OAuth2 token
// HMAC key ("oauth_hmac"): the database holds only the HMAC signatures of
// tokens, and with the key an attacker can neither recover a token from its
// signature (that needs the token's 256 random bits) nor make a token whose
// signature is stored (that needs a write to the database, which already
// gives everything away). The key that seals secrets is not here: see
// UseSecretKey. Processes sharing the database (the server,
// the CLI, other nodes) get the same key: the first insert wins and the
// others read it. A stored key of another size is EINTERNAL.
func (db *DB) ServerKey(ctx context.Context, name string, size int) ([]byte, error) {
	if size <= 0 {
		return nil, recon.Errorf(recon.EINVALID, "server key %q: size must be positive", name)
	}
	fresh := make([]byte, size)
	if _, err := io.ReadFull(db.rand, fresh); err != nil {
		return nil, internal(err, "generate server key")
	}
	if _, err := db.execWrite(ctx,
		`INSERT INTO server_keys (name, key, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
		name, fresh, db.now()); err != nil {
		return nil, internal(err, "store server key")
	}
	var key []byte
	if err := db.db.QueryRowContext(ctx, `SELECT key FROM server_keys WHERE name = $1`, name).Scan(&key); err != nil {
		return nil, internal(err, "read server key")
	}
	if len(key) != size {
		return nil, internal(fmt.Errorf("stored key has %d bytes, want %d", len(key), size), "server key "+name)
	}
	return key, nil
}

// Empty reports whether the database holds no company, and so no tenant
// data (every tenant row belongs to a company). Server keys do not count.
func (db *DB) Empty(ctx context.Context) (bool, error) {
	var exists bool
	if err := db.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM companies)`).Scan(&exists); err != nil {
		return false, internal(err, "check for data")
	}
	return !exists, nil
}
