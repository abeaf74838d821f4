package sqlstore_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// cell names one sealed value in SQL.
type cell struct{ table, column, where string }

func merchantCell(company int64) cell {
	return cell{"merchants", "secret_key", fmt.Sprintf("company_id = %d", company)}
}

func targetCell(column string, company int64, kind string) cell {
	return cell{"delivery_targets", column, fmt.Sprintf("company_id = %d AND kind = '%s'", company, kind)}
}

func readCell(t *testing.T, db *sqlstore.DB, c cell) []byte {
	t.Helper()
	var v []byte
	if err := db.SQL().QueryRowContext(t.Context(), `SELECT `+c.column+` FROM `+c.table+` WHERE `+c.where).Scan(&v); err != nil {
		t.Fatalf("read %v: %v", c, err)
	}
	return v
}

func writeCell(t *testing.T, db *sqlstore.DB, c cell, v []byte) {
	t.Helper()
	if err := db.Exec(t.Context(), `UPDATE `+c.table+` SET `+c.column+` = $1 WHERE `+c.where, v); err != nil {
		t.Fatalf("write %v: %v", c, err)
	}
}

// wantRefused checks that err is the store's refusal of a sealed value that
// is not its cell's: an internal error that says so, never a secret.
func wantRefused(t *testing.T, what string, err error, says string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: opened, want it refused", what)
	}
	if recon.ErrorCode(err) != recon.EINTERNAL || !strings.Contains(err.Error(), says) {
		t.Fatalf("%s: %v; want an internal error saying %q", what, err, says)
	}
}

// TestSealedSecretsAreBoundToTheirRows is the move attack of issue 18:
// someone who can write the database but has no key copies a sealed value
// from tenant A's row into tenant B's (or into another column, or another
// kind of target of the same tenant); B's use of it must fail loudly, not
// hand B A's secret.
func TestSealedSecretsAreBoundToTheirRows(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		db := openNoKey(t, databaseURL)
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		a, b := sealSome(t, db, 1), sealSome(t, db, 2)
		rotateSigning(t, db, &a) // a previous signing secret, in its own column
		rotateSigning(t, db, &b)
		listenA, err := db.ListenSecret(t.Context(), recon.LiveTenant(a.company))
		if err != nil {
			t.Fatal(err)
		}
		const anotherRow = "sealed for another row, tenant or column"
		for _, tc := range []struct {
			name     string
			from, to cell
			use      func() error
		}{
			{"merchant secret key, A's into B's row", merchantCell(a.company), merchantCell(b.company), func() error {
				_, err := db.MerchantByID(t.Context(), b.merchantPublicID)
				return err
			}},
			{"IPN secret, A's into B's row", targetCell("secret", a.company, recon.DeliveryIPN), targetCell("secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
			{"signing secret, A's into B's row", targetCell("signing_secret", a.company, recon.DeliveryIPN), targetCell("signing_secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
			{"B's secret into its signing_secret column", targetCell("secret", b.company, recon.DeliveryIPN), targetCell("signing_secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
			{"previous signing secret, A's into B's row", targetCell("previous_signing_secret", a.company, recon.DeliveryIPN), targetCell("previous_signing_secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
			{"B's signing secret into its previous_signing_secret column", targetCell("signing_secret", b.company, recon.DeliveryIPN), targetCell("previous_signing_secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
			{"A's IPN signing secret into its listen target", targetCell("signing_secret", a.company, recon.DeliveryIPN), targetCell("signing_secret", a.company, recon.ListenKind), func() error {
				_, err := db.ListenSecret(t.Context(), recon.LiveTenant(a.company))
				return err
			}},
			{"A's merchant key into B's IPN secret", merchantCell(a.company), targetCell("secret", b.company, recon.DeliveryIPN), func() error {
				_, err := db.DeliveryTarget(t.Context(), b.company, recon.DeliveryIPN)
				return err
			}},
		} {
			saved := readCell(t, db, tc.to)
			writeCell(t, db, tc.to, readCell(t, db, tc.from))
			wantRefused(t, tc.name, tc.use(), anotherRow)
			writeCell(t, db, tc.to, saved)
			if err := tc.use(); err != nil {
				t.Fatalf("%s, put back: %v", tc.name, err)
			}
		}
		wantSecrets(t, db, a)
		wantSecrets(t, db, b)
		if got, err := db.ListenSecret(t.Context(), recon.LiveTenant(a.company)); err != nil || got != listenA {
			t.Fatalf("A's listen secret: %q, %v", got, err)
		}
		// A rotation re-seals every value bound to its own cell: they all
		// open, and a move after it is refused the same way.
		if _, err := db.RotateSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, db, a)
		wantSecrets(t, db, b)
		writeCell(t, db, merchantCell(b.company), readCell(t, db, merchantCell(a.company)))
		_, err = db.MerchantOf(t.Context(), recon.LiveTenant(b.company))
		wantRefused(t, "merchant secret key moved after a rotation", err, anotherRow)
	})
}

// sealUnbound seals as the store did before migration 00020: version 1, key
// id, nonce, with only the 5-byte header as additional data.
func sealUnbound(t *testing.T, key []byte, id uint32, plain string) []byte {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 5+aead.NonceSize())
	out[0] = 1
	binary.BigEndian.PutUint32(out[1:5], id)
	rand.Read(out[5:])
	return aead.Seal(out, out[5:], []byte(plain), out[:5])
}

// TestUnboundSecretsAreBoundAtStart: a database from before migration 00020
// holds values sealed unbound (version 1). The first start after the
// upgrade re-seals them all bound to their cells, in one transaction, and
// from then on a version-1 value is refused, even one copied in later: a
// restart does not launder it into the row it was copied to.
func TestUnboundSecretsAreBoundAtStart(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		db := openNoKey(t, databaseURL)
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		a, b := sealSome(t, db, 1), sealSome(t, db, 2)
		key, err := base64.StdEncoding.DecodeString(keyFileKeys(t, keyFile)["1"])
		if err != nil {
			t.Fatal(err)
		}
		// The database as version 00019 left it: every value unbound.
		if err := db.MigrateTo(t.Context(), 19); err != nil {
			t.Fatal(err)
		}
		cells := func(s secrets) map[cell]string {
			return map[cell]string{
				merchantCell(s.company):                                    s.merchant,
				targetCell("secret", s.company, recon.DeliveryIPN):         s.ipn,
				targetCell("signing_secret", s.company, recon.DeliveryIPN): s.signing,
			}
		}
		old := map[cell][]byte{}
		for _, s := range []secrets{a, b} {
			for c, plain := range cells(s) {
				old[c] = sealUnbound(t, key, 1, plain)
				writeCell(t, db, c, old[c])
			}
		}
		db.Close()

		// Several nodes start at once on the upgraded database: one binds.
		dbs := make([]*sqlstore.DB, 3)
		errs := make(chan error, len(dbs))
		for i := range dbs {
			dbs[i] = openNoKey(t, databaseURL)
		}
		for i := range dbs {
			go func() { errs <- dbs[i].UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}) }()
		}
		for range dbs {
			if err := <-errs; err != nil {
				t.Fatalf("UseSecretKey: %v", err)
			}
		}
		db = dbs[0]
		for _, s := range []secrets{a, b} {
			for c := range cells(s) {
				if v := readCell(t, db, c); len(v) == 0 || v[0] != 2 {
					t.Fatalf("%v after the start: version %x, want 2 (bound)", c, v[:1])
				}
			}
			for _, d := range dbs {
				wantSecrets(t, d, s)
			}
		}
		var version int
		if err := db.SQL().QueryRowContext(t.Context(), `SELECT seal_version FROM secret_key_state`).Scan(&version); err != nil || version != 2 {
			t.Fatalf("seal_version = %d, %v; want 2", version, err)
		}
		// A's old unbound value copied into B's row: refused, and still
		// refused after a restart.
		writeCell(t, db, merchantCell(b.company), old[merchantCell(a.company)])
		_, err = db.MerchantOf(t.Context(), recon.LiveTenant(b.company))
		wantRefused(t, "an unbound value copied in after the upgrade", err, "before version 00020")
		again := openNoKey(t, databaseURL)
		if err := again.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		_, err = again.MerchantOf(t.Context(), recon.LiveTenant(b.company))
		wantRefused(t, "an unbound value copied in, after a restart", err, "before version 00020")
		wantSecrets(t, again, a)
	})
}
