package sqlstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"recon"
)

// KeySource says where the keys that seal secrets are (docs/design.md, D9).
// Exactly one of File and Keys is set.
type KeySource struct {
	// File is the key file: created with a new key (mode 0600) when it does
	// not exist and the database holds no secret sealed under another key.
	// recon keys rotate rewrites it.
	File string
	// Keys is the key ring itself, as a key file holds it (RECON_SECRET_KEY):
	// "ID:BASE64" entries separated by commas or white space, or one base64
	// key. A process given its keys this way cannot rotate them.
	Keys string
}

// DefaultKeyFile is where the key file of a SQLite database lives when none
// is named: beside the database file, PATH.key. PostgreSQL has no default
// ("" ): every node must be given the same key explicitly.
func (db *DB) DefaultKeyFile() string {
	if db.path == "" {
		return ""
	}
	return db.path + ".key"
}

// legacyKeyName is the server_keys row where the sealing key lived before
// migration 00005. UseSecretKey moves it out and leaves an empty key in its
// place, so that a process of an older version refuses to seal ("stored key
// has 0 bytes") instead of making a new key.
const legacyKeyName = "data"

// UseSecretKey loads the sealing keys from src and checks them against the
// database; it must be called after Migrate and before secrets are sealed or
// opened. On the way it
//   - creates src.File with a new random key on a new database (several
//     processes starting at once agree on one key: the file is created
//     exclusively, and the database records the key's fingerprint first
//     come, first served);
//   - moves the key of a database from before migration 00005 out of the
//     table server_keys: it is written to src.File (or must be in src.Keys),
//     synced to disk, and only then removed from the database, in one
//     transaction that also re-seals every secret in the new format. A
//     crash in between leaves the key in both places, and the next start
//     finishes the move; after the commit nothing removes the key file.
//
// A key file that does not hold the key the database's secrets are sealed
// under is refused with a message saying so.
func (db *DB) UseSecretKey(ctx context.Context, src KeySource) error {
	if (src.File == "") == (src.Keys == "") {
		return recon.Errorf(recon.EINVALID, "give the secret key either as a key file or as RECON_SECRET_KEY, not both or neither")
	}
	what := "RECON_SECRET_KEY"
	if src.File != "" {
		what = "the key file " + src.File
	}
	legacy, err := db.legacyKey(ctx)
	if err != nil {
		return err
	}
	state, err := db.keyState(ctx)
	if err != nil {
		return err
	}
	var ring *keyRing
	created := false
	if src.Keys != "" {
		if ring, err = parseKeyRing(src.Keys, what); err != nil {
			return recon.Errorf(recon.EINVALID, "%v", err)
		}
	} else {
		if ring, err = readKeyFile(src.File); err != nil {
			return err
		}
		if ring == nil {
			switch {
			case legacy != nil:
				ring = newKeyRing()
				ring.keys[1] = legacy
			case state != nil:
				return recon.Errorf(recon.EINVALID, "the database's secrets are sealed under secret key %d, but %s does not exist: restore it from your backup, or name the right one with --secret-key-file or RECON_SECRET_KEY", state.keyID, what)
			default:
				ring = newKeyRing()
				key := make([]byte, keySize)
				if _, err := io.ReadFull(db.rand, key); err != nil {
					return internal(err, "generate the secret key")
				}
				ring.keys[1] = key
			}
			if created, err = createKeyFile(src.File, ring); err != nil {
				return err
			}
			if !created { // another process was first: take its key
				if ring, err = readKeyFile(src.File); err != nil {
					return err
				}
				if ring == nil {
					return internal(fmt.Errorf("key file %s vanished", src.File), "read the secret key")
				}
			}
		}
	}
	fail := func(err error) error {
		if created && legacy == nil {
			// A new key the database refused (another node recorded its
			// own first): nothing is sealed under it; remove the file this
			// call made. A file holding a moved legacy key is never
			// removed: once the move commits it is the only copy.
			_ = os.Remove(src.File)
		}
		return err
	}
	if err := db.seal.set(ring, src); err != nil {
		return fail(internal(err, "load the secret key"))
	}
	if legacy != nil {
		id := ring.idOf(legacy)
		if id == 0 {
			return fail(recon.Errorf(recon.EINVALID, "%s does not hold the key this database's secrets are sealed under (still in its table server_keys, from before version 00005): start once without a key file of another database, so that the key is moved into a new file", what))
		}
		if err := db.moveLegacyKey(ctx, legacy, id); err != nil {
			return fail(err)
		}
	}
	if state, err = db.keyState(ctx); err != nil {
		return fail(err)
	}
	if state == nil {
		id := ring.newest()
		if _, err := db.execWrite(ctx,
			`INSERT INTO secret_key_state (id, key_id, fingerprint, updated_at, seal_version) VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
			int64(id), fingerprint(ring.keys[id]), db.now(), sealBound); err != nil {
			return fail(internal(err, "record the secret key"))
		}
		if state, err = db.keyState(ctx); err != nil {
			return fail(err)
		}
	}
	key := ring.keys[state.keyID]
	if key == nil {
		return fail(recon.Errorf(recon.EINVALID, "the database's secrets are sealed under secret key %d, which %s lacks: use the key file of this database (after `recon keys rotate`, copy the new key file to every node)", state.keyID, what))
	}
	if fingerprint(key) != state.fingerprint {
		return fail(recon.Errorf(recon.EINVALID, "%s is not this database's: its key %d differs from the one the secrets are sealed under (another node may have created the database with its own key: give every node the same key file)", what, state.keyID))
	}
	if state.sealVersion < sealBound {
		return db.bindSealed(ctx)
	}
	return nil
}

// bindSealed re-seals, once, every value sealed before migration 00020
// (version 1: its additional data only the header) bound to its cell
// (sealBinding), under the current key, in one transaction that also
// records secret_key_state.seal_version = 2. Whoever moves the version
// does the work; a concurrent start finds it done. From then on openSecret
// refuses a version-1 value: one copied in later (from a backup, say) is
// never re-sealed for the row it was copied into. What stays possible for
// someone who can write the database: putting back the whole state of
// before the upgrade (seal_version 1 and version-1 values, from an old
// copy), which a restart would then bind; `recon keys rotate` after the
// upgrade closes that too, since it drops the old keys from the key file
// (README.md, "The secret key").
func (db *DB) bindSealed(ctx context.Context) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE secret_key_state SET seal_version = $1 WHERE id = 1 AND seal_version < $1`, sealBound)
		if err != nil {
			return internal(err, "bind sealed secrets to their rows")
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // another process did it
		}
		id, err := db.currentKeyID(ctx, tx)
		if err != nil {
			return err
		}
		_, err = db.reseal(ctx, tx, func(c sealedCell) (string, error) {
			if v, _, err := sealedHeader(c.value); err == nil && v == sealBound {
				return db.openSecret(ctx, c.bind, c.value)
			}
			return db.openUnbound(c.value)
		}, id)
		return err
	})
}

type keyState struct {
	keyID       uint32
	fingerprint string
	sealVersion int
}

func (db *DB) keyState(ctx context.Context) (*keyState, error) {
	var s keyState
	var id int64
	err := db.db.QueryRowContext(ctx, `SELECT key_id, fingerprint, seal_version FROM secret_key_state WHERE id = 1`).Scan(&id, &s.fingerprint, &s.sealVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal(err, "read the secret key state")
	}
	s.keyID = uint32(id)
	return &s, nil
}

// legacyKey returns the sealing key still stored in the database, or nil.
func (db *DB) legacyKey(ctx context.Context) ([]byte, error) {
	var key []byte
	err := db.db.QueryRowContext(ctx, `SELECT key FROM server_keys WHERE name = $1`, legacyKeyName).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) || err == nil && len(key) != keySize {
		return nil, nil
	}
	if err != nil {
		return nil, internal(err, "read the legacy secret key")
	}
	return key, nil
}

// moveLegacyKey finishes moving the key out of the database, once: in one
// transaction, it blanks the server_keys row (whoever blanks it does the
// rest; a concurrent start finds nothing left), re-seals every secret from
// the old format (nonce | ciphertext, no key id) under key id, and records
// the key's fingerprint. The transaction runs with the dialect's
// secureDelete and is followed by its purgeDeleted, so that the old key's
// bytes are gone from the database's files: on SQLite they are overwritten
// in the database file and the write-ahead log is checkpointed and
// truncated (an error if it cannot be); on PostgreSQL the table is rewritten
// (VACUUM FULL, best effort: WAL segments and backups from before keep the
// key anyway; README: rotate after upgrading).
func (db *DB) moveLegacyKey(ctx context.Context, legacy []byte, id uint32) error {
	block, err := aes.NewCipher(legacy)
	if err != nil {
		return internal(err, "move the secret key")
	}
	old, err := cipher.NewGCM(block)
	if err != nil {
		return internal(err, "move the secret key")
	}
	openOld := func(c sealedCell) (string, error) { return openNonced(old, c.value, nil) }
	conn, err := db.db.Conn(ctx)
	if err != nil {
		return internal(err, "move the secret key")
	}
	defer conn.Close()
	restore, err := db.d.secureDelete(ctx, conn)
	if err != nil {
		return internal(err, "move the secret key")
	}
	defer restore()
	if db.writer != nil {
		db.writer <- struct{}{}
		defer func() { <-db.writer }()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return internal(err, "move the secret key")
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE server_keys SET key = $1 WHERE name = $2 AND length(key) = $3`, []byte{}, legacyKeyName, keySize)
	if err != nil {
		return internal(err, "move the secret key")
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // another process moved it
	}
	if _, err := db.reseal(ctx, tx, openOld, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO secret_key_state (id, key_id, fingerprint, updated_at, seal_version) VALUES (1, $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, fingerprint = excluded.fingerprint, updated_at = excluded.updated_at,
			seal_version = excluded.seal_version`,
		int64(id), fingerprint(legacy), db.now(), sealBound); err != nil {
		return internal(err, "record the secret key")
	}
	if err := tx.Commit(); err != nil {
		return internal(err, "move the secret key")
	}
	// The move is done and the key file is now the only copy: failing to
	// purge (SQLite's checkpoint is busy while a reader holds an old
	// snapshot) must not undo that. The old bytes then stay in the
	// write-ahead log until SQLite's next automatic checkpoint.
	_ = db.d.purgeDeleted(ctx, conn, "server_keys")
	return nil
}

// sealedCell is one sealed value in the database.
type sealedCell struct {
	update string // UPDATE statement: $1 the new value, then args
	args   []any
	bind   sealBinding
	value  []byte
}

// sealedCells reads every sealed value (merchant secret keys, target secrets,
// signing secrets current and previous, invoice certificates' keys and alerts' chat webhook URLs)
// within q.
func sealedCells(ctx context.Context, q querier) ([]sealedCell, error) {
	var cells []sealedCell
	rows, err := q.QueryContext(ctx, `SELECT company_id, secret_key FROM merchants`)
	if err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	for rows.Next() {
		var c sealedCell
		var company int64
		if err := rows.Scan(&company, &c.value); err != nil {
			rows.Close()
			return nil, internal(err, "read sealed secrets")
		}
		c.update, c.args, c.bind = `UPDATE merchants SET secret_key = $1 WHERE company_id = $2`, []any{company}, merchantBinding(company)
		cells = append(cells, c)
	}
	if err := rows.Close(); err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	rows, err = q.QueryContext(ctx, `SELECT company_id, kind, secret, signing_secret, previous_signing_secret FROM delivery_targets`)
	if err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	defer rows.Close()
	for rows.Next() {
		var company int64
		var kind string
		var secret, signing, previous []byte
		if err := rows.Scan(&company, &kind, &secret, &signing, &previous); err != nil {
			return nil, internal(err, "read sealed secrets")
		}
		if len(secret) > 0 {
			cells = append(cells, sealedCell{`UPDATE delivery_targets SET secret = $1 WHERE company_id = $2 AND kind = $3`,
				[]any{company, kind}, targetBinding("secret", company, kind), secret})
		}
		if len(signing) > 0 {
			cells = append(cells, sealedCell{`UPDATE delivery_targets SET signing_secret = $1 WHERE company_id = $2 AND kind = $3`,
				[]any{company, kind}, targetBinding("signing_secret", company, kind), signing})
		}
		if len(previous) > 0 {
			cells = append(cells, sealedCell{`UPDATE delivery_targets SET previous_signing_secret = $1 WHERE company_id = $2 AND kind = $3`,
				[]any{company, kind}, targetBinding("previous_signing_secret", company, kind), previous})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	rows.Close()
	rows, err = q.QueryContext(ctx, `SELECT company_id, private_key FROM invoice_certificates`)
	if err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	defer rows.Close()
	for rows.Next() {
		var company int64
		var key []byte
		if err := rows.Scan(&company, &key); err != nil {
			return nil, internal(err, "read sealed secrets")
		}
		cells = append(cells, sealedCell{`UPDATE invoice_certificates SET private_key = $1 WHERE company_id = $2`,
			[]any{company}, invoiceCertBinding(company), key})
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	rows.Close()
	rows, err = q.QueryContext(ctx, `SELECT company_id, chat_url_sealed FROM alert_settings WHERE chat_url_sealed IS NOT NULL`)
	if err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	defer rows.Close()
	for rows.Next() {
		var company int64
		var url []byte
		if err := rows.Scan(&company, &url); err != nil {
			return nil, internal(err, "read sealed secrets")
		}
		if len(url) > 0 {
			cells = append(cells, sealedCell{`UPDATE alert_settings SET chat_url_sealed = $1 WHERE company_id = $2`,
				[]any{company}, alertChatBinding(company), url})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "read sealed secrets")
	}
	return cells, nil
}

// reseal opens every sealed value with open and seals it again under key
// id, bound to its cell, within tx; it returns how many it re-sealed.
func (db *DB) reseal(ctx context.Context, tx *sql.Tx, open func(sealedCell) (string, error), id uint32) (int, error) {
	cells, err := sealedCells(ctx, tx)
	if err != nil {
		return 0, err
	}
	for _, c := range cells {
		plain, err := open(c)
		if err != nil {
			return 0, internal(err, "re-seal secrets: open "+c.bind.String())
		}
		sealed, err := db.sealWith(id, c.bind, plain)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, c.update, append([]any{sealed}, c.args...)...); err != nil {
			return 0, internal(err, "re-seal secrets")
		}
	}
	return len(cells), nil
}

// Rotation is what RotateSecretKey did.
type Rotation struct {
	OldKeyID, NewKeyID uint32
	Resealed           int // sealed values re-sealed under the new key
}

// RotateSecretKey replaces the sealing key (recon keys rotate); the DB must
// have been loaded with UseSecretKey from the same key file. In order:
//  1. a new key is added to the key file (written to a temporary file,
//     synced, renamed over it): the file holds the old and new keys;
//  2. one database transaction makes the new key current and re-seals every
//     secret under it. Processes that seal a secret read the current key in
//     their own write transaction (locked on PostgreSQL, serialised on
//     SQLite), so none can seal under the old key after this commits;
//  3. the key file is rewritten without the keys no secret is sealed under.
//
// A crash after 1 leaves both keys in the file and the secrets under the
// old one; after 2, both keys and the secrets under the new one. Either way
// every secret opens, and running the rotation again finishes the job.
// Other processes re-read the key file when they meet the new key id; nodes
// given the key by RECON_SECRET_KEY, or with their own copy of the file,
// need the new file's content.
func (db *DB) RotateSecretKey(ctx context.Context, src KeySource) (*Rotation, error) {
	if src.File == "" {
		return nil, recon.Errorf(recon.EINVALID, "recon keys rotate writes the new key into the key file: name it with --secret-key-file (a key given in RECON_SECRET_KEY cannot be rewritten; put it in a file, rotate, then give every node the file's new content)")
	}
	// One rotation at a time per database: two would each add a key of the
	// same id to the file, and the second write would lose the first's key.
	unlock, err := db.lockMigrations(ctx)
	if err != nil {
		return nil, internal(err, "rotate the secret key")
	}
	defer unlock()
	ring, err := readKeyFile(src.File)
	if err != nil {
		return nil, err
	}
	if ring == nil {
		return nil, recon.Errorf(recon.EINVALID, "the key file %s does not exist", src.File)
	}
	state, err := db.keyState(ctx)
	if err != nil {
		return nil, err
	}
	if state == nil {
		return nil, internal(errors.New("no secret_key_state"), "rotate the secret key (was UseSecretKey called?)")
	}
	newID := ring.newest() + 1
	key := make([]byte, keySize)
	if _, err := io.ReadFull(db.rand, key); err != nil {
		return nil, internal(err, "generate the secret key")
	}
	ring.keys[newID] = key
	if err := writeKeyFile(src.File, ring); err != nil {
		return nil, err
	}
	if err := db.seal.set(ring, src); err != nil {
		return nil, internal(err, "load the secret key")
	}
	rot := &Rotation{OldKeyID: state.keyID, NewKeyID: newID}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE secret_key_state SET key_id = $1, fingerprint = $2, updated_at = $3 WHERE id = 1`,
			int64(newID), fingerprint(key), db.now()); err != nil {
			return internal(err, "rotate the secret key")
		}
		open := func(c sealedCell) (string, error) { return db.openSecret(ctx, c.bind, c.value) }
		n, err := db.reseal(ctx, tx, open, newID)
		rot.Resealed = n
		return err
	})
	if err != nil {
		return nil, err
	}
	// Keep any key a secret is still sealed under (none, unless a process
	// of an older version wrote one), drop the others.
	cells, err := sealedCells(ctx, db.db)
	if err != nil {
		return nil, err
	}
	keep := newKeyRing()
	keep.keys[newID] = key
	for _, c := range cells {
		if id, err := sealedKeyID(c.value); err == nil && ring.keys[id] != nil {
			keep.keys[id] = ring.keys[id]
		}
	}
	if err := writeKeyFile(src.File, keep); err != nil {
		return nil, err
	}
	if err := db.seal.set(keep, src); err != nil {
		return nil, internal(err, "load the secret key")
	}
	return rot, nil
}

// readKeyFile reads a key file; a file that does not exist is (nil, nil).
func readKeyFile(path string) (*keyRing, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, recon.Errorf(recon.EINVALID, "cannot read the key file: %v", err)
	}
	ring, err := parseKeyRing(string(b), "the key file "+path)
	if err != nil {
		return nil, recon.Errorf(recon.EINVALID, "%v", err)
	}
	return ring, nil
}

// tempKeyFile writes ring to a new file, mode 0600, in path's folder and
// syncs it.
func tempKeyFile(path string, ring *keyRing) (string, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", recon.Errorf(recon.EINVALID, "cannot write the key file in %s: %v", dir, err)
	}
	_, err = f.Write(ring.format())
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", recon.Errorf(recon.EINVALID, "cannot write the key file %s: %v", path, err)
	}
	return f.Name(), nil
}

// createKeyFile creates path holding ring unless it exists (then it reports
// false): the complete file appears at once (a hard link of a synced
// temporary file), so a concurrent reader never sees half of it, and two
// processes creating it at once cannot both win.
func createKeyFile(path string, ring *keyRing) (bool, error) {
	tmp, err := tempKeyFile(path, ring)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, recon.Errorf(recon.EINVALID, "cannot create the key file %s: %v", path, err)
	}
	return true, syncDir(filepath.Dir(path))
}

// writeKeyFile replaces path with ring atomically (rename of a synced
// temporary file).
func writeKeyFile(path string, ring *keyRing) error {
	tmp, err := tempKeyFile(path, ring)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return recon.Errorf(recon.EINVALID, "cannot replace the key file %s: %v", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a new or renamed entry of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return internal(err, "sync the key file's folder")
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return internal(err, "sync the key file's folder")
	}
	return nil
}
