package sqlstore_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"recon"
	"recon/sqlstore"
	"recon/sqlstore/dbtest"
)

// openNoKey opens and migrates databaseURL without loading a secret key.
func openNoKey(t *testing.T, databaseURL string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return db
}

// sqlitePath is the file of a "sqlite:PATH" URL.
func sqlitePath(databaseURL string) string { return strings.TrimPrefix(databaseURL, "sqlite:") }

// keyFileKeys returns the base64 keys a key file holds, by id.
func keyFileKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^(\d+):(\S+)$`).FindAllStringSubmatch(string(b), -1) {
		keys[m[1]] = m[2]
	}
	return keys
}

// secrets is what sealSome stores: the merchant secret key, the IPN secret.
type secrets struct {
	company          int64
	merchant, ipn    string
	signing          string
	previous         string // the signing secret a rotation replaced (rotateSigning), "" before one
	merchantPublicID string
}

// rotateSigning gives s's IPN target a new signing secret: the one it
// replaces becomes its previous one.
func rotateSigning(t *testing.T, db *sqlstore.DB, s *secrets) {
	t.Helper()
	tg := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthSecretKey, Secret: s.ipn, SigningSecret: recon.NewSecret(), Active: true}
	if err := db.SetIPN(t.Context(), recon.LiveTenant(s.company), tg); err != nil {
		t.Fatal(err)
	}
	if tg.PreviousSigningSecret != s.signing {
		t.Fatalf("rotated: previous %q, want %q", tg.PreviousSigningSecret, s.signing)
	}
	s.previous, s.signing = s.signing, tg.SigningSecret
}

// sealSome stores a merchant and an IPN target, each with a secret.
func sealSome(t *testing.T, db *sqlstore.DB, n int) secrets {
	t.Helper()
	c := &recon.Company{FullName: fmt.Sprintf("Company %d", n), ShortName: "C", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	s := secrets{company: c.ID, merchant: recon.NewSecret(), ipn: recon.NewSecret(), merchantPublicID: fmt.Sprintf("MC%d", n)}
	if err := db.SetMerchant(t.Context(), &recon.Merchant{Tenant: c.Tenant(), MerchantID: s.merchantPublicID, SecretKey: s.merchant}); err != nil {
		t.Fatal(err)
	}
	tg := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthSecretKey, Secret: s.ipn, Active: true}
	if err := db.SetIPN(t.Context(), c.Tenant(), tg); err != nil {
		t.Fatal(err)
	}
	s.signing = tg.SigningSecret
	return s
}

// wantSecrets checks that db opens what sealSome stored.
func wantSecrets(t *testing.T, db *sqlstore.DB, s secrets) {
	t.Helper()
	m, err := db.MerchantOf(t.Context(), recon.LiveTenant(s.company))
	if err != nil || m.SecretKey != s.merchant {
		t.Fatalf("MerchantOf = %+v, %v; want the secret key %q", m, err, s.merchant)
	}
	tg, err := db.DeliveryTarget(t.Context(), s.company, recon.DeliveryIPN)
	if err != nil || tg.Secret != s.ipn || (s.signing != "" && tg.SigningSecret != s.signing) || tg.PreviousSigningSecret != s.previous {
		t.Fatalf("DeliveryTarget = %+v, %v; want the secrets %q, %q, previous %q", tg, err, s.ipn, s.signing, s.previous)
	}
}

// wantNotInFile checks that none of the needles is in the SQLite database's
// files (the database and its write-ahead log), after db is closed.
func wantNotInFile(t *testing.T, databaseURL string, needles map[string][]byte) {
	t.Helper()
	path := sqlitePath(databaseURL)
	var all []byte
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatal("the database file is empty")
	}
	for what, n := range needles {
		if bytes.Contains(all, n) {
			t.Errorf("a copy of the database holds %s", what)
		}
	}
}

// TestDatabaseCopyRevealsNoSecret is the finding "the AES key lives in the
// same database": a copy of the SQLite file must hold neither the sealing
// key nor any secret in clear.
func TestDatabaseCopyRevealsNoSecret(t *testing.T) {
	t.Parallel()
	databaseURL := dbtest.NewURL(t, sqlstore.EngineSQLite)
	db := openNoKey(t, databaseURL)
	keyFile := db.DefaultKeyFile()
	if keyFile != sqlitePath(databaseURL)+".key" {
		t.Fatalf("DefaultKeyFile = %q, want beside the database", keyFile)
	}
	if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	s := sealSome(t, db, 1)
	wantSecrets(t, db, s)
	db.Close()
	keys := keyFileKeys(t, keyFile)
	if len(keys) != 1 || keys["1"] == "" {
		t.Fatalf("key file holds %v, want key 1", keys)
	}
	raw, _ := base64.StdEncoding.DecodeString(keys["1"])
	wantNotInFile(t, databaseURL, map[string][]byte{
		"the sealing key": raw, "the sealing key in base64": []byte(keys["1"]),
		"the merchant secret": []byte(s.merchant), "the IPN secret": []byte(s.ipn), "the signing secret": []byte(s.signing),
	})
}

// legacySeal seals as the store did before migration 00005: nonce | GCM, no key id.
func legacySeal(t *testing.T, key []byte, plain string) []byte {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	return aead.Seal(nonce, nonce, []byte(plain), nil)
}

// legacyDatabase makes a database as an older Recon left it: the sealing
// key in server_keys and secrets sealed under it, a target without a
// signing secret.
func legacyDatabase(t *testing.T, engine string) (databaseURL string, key []byte, s secrets) {
	t.Helper()
	databaseURL = dbtest.NewURL(t, engine)
	db := openNoKey(t, databaseURL)
	key = make([]byte, 32)
	rand.Read(key)
	now := time.Now().UTC().Truncate(time.Microsecond)
	c := &recon.Company{FullName: "Legacy", ShortName: "L", Status: recon.CompanyActive}
	if err := db.CreateCompany(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	s = secrets{company: c.ID, merchant: "legacy-merchant-" + recon.NewSecret(), ipn: "legacy-ipn-" + recon.NewSecret()}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO server_keys (name, key, created_at) VALUES ('data', $1, $2)`, []any{key, now}},
		{`INSERT INTO merchants (company_id, merchant_id, secret_key, created_at) VALUES ($1, 'MCL', $2, $3)`, []any{c.ID, legacySeal(t, key, s.merchant), now}},
		{`INSERT INTO delivery_targets (company_id, kind, url, auth_type, secret, active, settings, updated_at) VALUES ($1, 'ipn', 'https://shop.example/ipn', 'SECRET_KEY', $2, true, '{}', $3)`,
			[]any{c.ID, legacySeal(t, key, s.ipn), now}},
	} {
		if _, err := db.SQL().ExecContext(t.Context(), q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	db.Close()
	return databaseURL, key, s
}

// TestUpgradeMovesKeyOut: a database whose key is still in server_keys gets
// it moved into the key file, once, and its secrets stay readable.
func TestUpgradeMovesKeyOut(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL, key, s := legacyDatabase(t, engine)
		keyFile := filepath.Join(t.TempDir(), "recon.key")

		// Several processes start at once: all agree, the key is moved once.
		const n = 4
		dbs := make([]*sqlstore.DB, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			dbs[i] = openNoKey(t, databaseURL)
			wg.Go(func() { errs[i] = dbs[i].UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("UseSecretKey %d: %v", i, err)
			}
		}
		if keys := keyFileKeys(t, keyFile); len(keys) != 1 || keys["1"] != base64.StdEncoding.EncodeToString(key) {
			t.Fatalf("key file holds %v, want the database's key as key 1", keys)
		}
		for _, db := range dbs {
			wantSecrets(t, db, s)
		}
		// The target got a signing secret on first read, the same for all:
		// a SECRET_KEY target's own secret, what its receiver verified with.
		tg, err := dbs[0].DeliveryTarget(t.Context(), s.company, recon.DeliveryIPN)
		if err != nil || tg.SigningSecret != s.ipn {
			t.Fatalf("signing secret of an old target: %+v, %v", tg, err)
		}
		s.signing = tg.SigningSecret
		for _, db := range dbs {
			wantSecrets(t, db, s)
		}
		// The key is gone from the database; an older Recon, which would ask
		// for it there, is refused rather than given a new key.
		var stored []byte
		if err := dbs[0].SQL().QueryRowContext(t.Context(), `SELECT key FROM server_keys WHERE name = 'data'`).Scan(&stored); err != nil || len(stored) != 0 {
			t.Fatalf("server_keys data = %x, %v; want an empty key", stored, err)
		}
		if _, err := dbs[0].ServerKey(t.Context(), "data", 32); recon.ErrorCode(err) != recon.EINTERNAL {
			t.Fatalf("an old version's ServerKey(data): %v, want it refused", err)
		}
		// New secrets are sealed under the moved key, and a restart finds it.
		s2 := sealSome(t, dbs[1], 2)
		again := openNoKey(t, databaseURL)
		if err := again.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, again, s)
		wantSecrets(t, again, s2)
		if engine == sqlstore.EngineSQLite {
			for _, db := range append(dbs, again) {
				db.Close()
			}
			wantNotInFile(t, databaseURL, map[string][]byte{
				"the old key": key, "the merchant secret": []byte(s.merchant), "the IPN secret": []byte(s.ipn),
				"the signing secret": []byte(s.signing), "the new merchant secret": []byte(s2.merchant),
			})
		}
	})
}

// TestUpgradeAfterACrash: a crash after the key file was written and before
// the database let go of the key leaves both; the next start finishes. A key
// file of another key is refused and changes nothing.
func TestUpgradeAfterACrash(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL, key, s := legacyDatabase(t, engine)
		dir := t.TempDir()

		wrong := filepath.Join(dir, "wrong.key")
		other := make([]byte, 32)
		rand.Read(other)
		if err := os.WriteFile(wrong, []byte("1:"+base64.StdEncoding.EncodeToString(other)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		db := openNoKey(t, databaseURL)
		err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: wrong})
		if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(err.Error(), "does not hold the key this database's secrets are sealed under") {
			t.Fatalf("a wrong key file: %v", err)
		}
		if _, err := db.ServerKey(t.Context(), "data", 32); err != nil {
			t.Fatalf("the key must still be in the database after a refusal: %v", err)
		}
		// The state right after the crash: the key in the file and in the database.
		good := filepath.Join(dir, "recon.key")
		if err := os.WriteFile(good, []byte("1:"+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: good}); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, db, s)
		// The key given as RECON_SECRET_KEY works the same way.
		envDB := openNoKey(t, databaseURL)
		if err := envDB.UseSecretKey(t.Context(), sqlstore.KeySource{Keys: base64.StdEncoding.EncodeToString(key)}); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, envDB, s)
	})
}

// TestSecretKeyRefusals: a lost, wrong or malformed key is refused at start
// with a message that says what to do, never by sealing under a new key.
func TestSecretKeyRefusals(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		dir := t.TempDir()
		keyFile := filepath.Join(dir, "recon.key")
		db := openNoKey(t, databaseURL)
		if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
			t.Fatal(err)
		}
		s := sealSome(t, db, 1)

		missing := filepath.Join(dir, "missing.key")
		for _, tc := range []struct {
			name string
			src  sqlstore.KeySource
			want string
		}{
			{"lost key file", sqlstore.KeySource{File: missing}, "the database's secrets are sealed under secret key 1, but the key file " + missing + " does not exist"},
			{"another key", sqlstore.KeySource{Keys: base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))}, "RECON_SECRET_KEY is not this database's"},
			{"short key", sqlstore.KeySource{Keys: "c2hvcnQ="}, "RECON_SECRET_KEY: key 1 must be 32 bytes in standard base64"},
			{"bad id", sqlstore.KeySource{Keys: "x:" + base64.StdEncoding.EncodeToString(make([]byte, 32))}, "the key id must be a whole number"},
			{"lacks the current key", sqlstore.KeySource{Keys: "2:" + base64.StdEncoding.EncodeToString(make([]byte, 32))}, "sealed under secret key 1, which RECON_SECRET_KEY lacks"},
			{"both", sqlstore.KeySource{File: keyFile, Keys: "x"}, "not both or neither"},
		} {
			other := openNoKey(t, databaseURL)
			err := other.UseSecretKey(t.Context(), tc.src)
			if recon.ErrorCode(err) != recon.EINVALID || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: got %v, want an EINVALID error containing %q", tc.name, err, tc.want)
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("%s: a key file was created for a database sealed under another key", tc.name)
			}
		}
		wantSecrets(t, db, s)
	})
}

// TestFirstStartOneKey: processes starting at once on a new database agree
// on one key. With a shared key file (SQLite's default beside the database)
// they all use the file the first one made; with a key file each (nodes of
// one PostgreSQL), the first to record its key wins and the others refuse to
// start (removing the file they made, or making none when they come after).
func TestFirstStartOneKey(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		for _, shared := range []bool{true, false} {
			databaseURL := dbtest.NewURL(t, engine)
			dir := t.TempDir()
			const n = 4
			dbs := make([]*sqlstore.DB, n)
			errs := make([]error, n)
			files := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				dbs[i] = openNoKey(t, databaseURL)
				files[i] = filepath.Join(dir, "recon.key")
				if !shared {
					files[i] = filepath.Join(dir, fmt.Sprintf("node%d.key", i))
				}
				wg.Go(func() { errs[i] = dbs[i].UseSecretKey(t.Context(), sqlstore.KeySource{File: files[i]}) })
			}
			wg.Wait()
			var winners []int
			for i, err := range errs {
				switch {
				case err == nil:
					winners = append(winners, i)
				case shared || !strings.Contains(err.Error(), "give every node the same key file") && !strings.Contains(err.Error(), "does not exist"):
					t.Fatalf("shared %v: UseSecretKey %d: %v", shared, i, err)
				default:
					if _, err := os.Stat(files[i]); !os.IsNotExist(err) {
						t.Errorf("the refused node %d kept its key file", i)
					}
				}
			}
			if shared && len(winners) != n || !shared && len(winners) != 1 {
				t.Fatalf("shared %v: %d processes started, errors %v", shared, len(winners), errs)
			}
			// What one seals, every other started process opens.
			s := sealSome(t, dbs[winners[0]], 1)
			for _, i := range winners {
				wantSecrets(t, dbs[i], s)
			}
		}
	})
}

// TestRotateSecretKey: rotation re-seals every secret under a new key and
// leaves only it in the key file; a process started before the rotation
// follows it (it re-reads the key file), and secrets sealed while the
// rotation runs all end up under a key the file holds. Not parallel with the
// package's other tests: on SQLite the rotation waits for the write lock
// beside a writer that never pauses, and with the CPUs busy it may wait out
// busy_timeout (SQLITE_BUSY).
func TestRotateSecretKey(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		src := sqlstore.KeySource{File: keyFile}
		server := openNoKey(t, databaseURL) // started before the rotation, kept running
		if err := server.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		var before []secrets
		for i := range 3 {
			before = append(before, sealSome(t, server, i))
		}
		oldKey := keyFileKeys(t, keyFile)["1"]

		cli := openNoKey(t, databaseURL)
		if err := cli.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		// The server keeps saving secrets while the rotation runs.
		ctx, cancel := context.WithCancel(t.Context())
		var during []secrets
		done := make(chan error, 1)
		go func() {
			for i := 10; ; i++ {
				select {
				case <-ctx.Done():
					done <- nil
					return
				default:
				}
				c := &recon.Company{FullName: fmt.Sprintf("During %d", i), ShortName: "D", Status: recon.CompanyActive}
				if err := server.CreateCompany(ctx, c); err != nil {
					done <- err
					return
				}
				tg := &recon.Target{URL: "https://shop.example/ipn", AuthType: recon.AuthSecretKey, Secret: recon.NewSecret(), Active: true}
				if err := server.SetIPN(ctx, c.Tenant(), tg); err != nil {
					done <- err
					return
				}
				during = append(during, secrets{company: c.ID, ipn: tg.Secret, signing: tg.SigningSecret})
			}
		}()
		rot, err := cli.RotateSecretKey(t.Context(), src)
		cancel()
		if werr := <-done; werr != nil && ctx.Err() == nil {
			t.Fatalf("saving during the rotation: %v", werr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if rot.OldKeyID != 1 || rot.NewKeyID != 2 || rot.Resealed < 3*3 {
			t.Fatalf("rotation = %+v, want 1 → 2 and at least 9 secrets re-sealed", rot)
		}
		keys := keyFileKeys(t, keyFile)
		if len(keys) != 1 || keys["2"] == "" || keys["2"] == oldKey {
			t.Fatalf("key file after the rotation holds %v, want only the new key 2", keys)
		}
		// A process started now knows only the new key: everything opens.
		fresh := openNoKey(t, databaseURL)
		if err := fresh.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		for _, s := range before {
			wantSecrets(t, fresh, s)
			wantSecrets(t, server, s)
		}
		for _, s := range during {
			tg, err := fresh.DeliveryTarget(t.Context(), s.company, recon.DeliveryIPN)
			if err != nil || tg.Secret != s.ipn || tg.SigningSecret != s.signing {
				t.Fatalf("a secret saved during the rotation: %+v, %v", tg, err)
			}
		}
		// The running server seals under the new key from now on.
		after := sealSome(t, server, 99)
		wantSecrets(t, fresh, after)
		// Rotating again: key 3.
		if rot, err := fresh.RotateSecretKey(t.Context(), src); err != nil || rot.NewKeyID != 3 {
			t.Fatalf("second rotation = %+v, %v", rot, err)
		}
		wantSecrets(t, server, after)
		// A key given in the environment cannot be rotated.
		if _, err := fresh.RotateSecretKey(t.Context(), sqlstore.KeySource{Keys: keys["2"]}); recon.ErrorCode(err) != recon.EINVALID ||
			!strings.Contains(err.Error(), "--secret-key-file") {
			t.Fatalf("rotating RECON_SECRET_KEY: %v", err)
		}
	})
}

// TestKeyFileWithTwoKeys: a rotation that crashed after writing the new key
// leaves old and new keys in the file while the database still names the
// old one: everything opens, and the next rotation finishes the job.
func TestKeyFileWithTwoKeys(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		keyFile := filepath.Join(t.TempDir(), "recon.key")
		src := sqlstore.KeySource{File: keyFile}
		db := openNoKey(t, databaseURL)
		if err := db.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		s := sealSome(t, db, 1)
		old := keyFileKeys(t, keyFile)["1"]
		extra := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
		if err := os.WriteFile(keyFile, []byte("1:"+old+"\n2:"+extra+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		again := openNoKey(t, databaseURL)
		if err := again.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		wantSecrets(t, again, s)
		s2 := sealSome(t, again, 2) // sealed under key 1, the current one
		rot, err := again.RotateSecretKey(t.Context(), src)
		if err != nil || rot.OldKeyID != 1 || rot.NewKeyID != 3 {
			t.Fatalf("rotation = %+v, %v", rot, err)
		}
		if keys := keyFileKeys(t, keyFile); len(keys) != 1 || keys["3"] == "" {
			t.Fatalf("key file holds %v, want only key 3", keys)
		}
		wantSecrets(t, db, s)
		wantSecrets(t, db, s2)
	})
}

// TestConcurrentRotations: two `recon keys rotate` at once on one database
// and key file take turns (the migration lock): each adds its own key, and a
// process started afterwards with the file opens every secret. Without the
// lock both picked the same new key id and the second write of the file
// lost the first's key, with secrets already sealed under it.
func TestConcurrentRotations(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		databaseURL := dbtest.NewURL(t, engine)
		src := sqlstore.KeySource{File: filepath.Join(t.TempDir(), "recon.key")}
		first := openNoKey(t, databaseURL)
		if err := first.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		var sealed []secrets
		for i := range 3 {
			sealed = append(sealed, sealSome(t, first, i))
		}
		rotators := make([]*sqlstore.DB, 2)
		for i := range rotators {
			rotators[i] = openNoKey(t, databaseURL)
			if err := rotators[i].UseSecretKey(t.Context(), src); err != nil {
				t.Fatal(err)
			}
		}
		start := make(chan struct{})
		results := make(chan *sqlstore.Rotation, len(rotators))
		errs := make(chan error, len(rotators))
		for _, db := range rotators {
			go func() {
				<-start
				rot, err := db.RotateSecretKey(t.Context(), src)
				results <- rot
				errs <- err
			}()
		}
		close(start)
		ids := map[uint32]bool{}
		for range rotators {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			ids[(<-results).NewKeyID] = true
		}
		if len(ids) != 2 {
			t.Fatalf("the two rotations made keys %v, want two different ids", ids)
		}
		fresh := openNoKey(t, databaseURL)
		if err := fresh.UseSecretKey(t.Context(), src); err != nil {
			t.Fatal(err)
		}
		for _, s := range sealed {
			wantSecrets(t, fresh, s)
		}
	})
}

// TestSigningSecretOfATargetFromBefore: a target saved before targets had
// signing secrets (migration 00005) gets one on first read: a SECRET_KEY
// target keeps signing under its own secret, which its receiver already
// verifies with, and a NONE target (signed under the empty key before)
// gets a new one. Either way nothing is signed under an empty key.
func TestSigningSecretOfATargetFromBefore(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, engine string) {
		t.Parallel()
		db := dbtest.OpenStore(t, engine)
		for _, auth := range []string{recon.AuthSecretKey, recon.AuthNone} {
			c := &recon.Company{FullName: "Old " + auth, ShortName: "O", Status: recon.CompanyActive}
			if err := db.CreateCompany(t.Context(), c); err != nil {
				t.Fatal(err)
			}
			tg := &recon.Target{URL: "https://shop.example/ipn", AuthType: auth, Active: true}
			if auth == recon.AuthSecretKey {
				tg.Secret = recon.NewSecret()
			}
			if err := db.SetIPN(t.Context(), c.Tenant(), tg); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL().ExecContext(t.Context(), `UPDATE delivery_targets SET signing_secret = NULL WHERE company_id = $1`, c.ID); err != nil {
				t.Fatal(err)
			}
			got, err := db.DeliveryTarget(t.Context(), c.ID, recon.DeliveryIPN)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case auth == recon.AuthSecretKey && got.SigningSecret != tg.Secret:
				t.Errorf("SECRET_KEY target from before: signing secret %q, want its own secret %q", got.SigningSecret, tg.Secret)
			case auth == recon.AuthNone && (len(got.SigningSecret) != recon.SecretLen || got.SigningSecret == tg.SigningSecret):
				t.Errorf("NONE target from before: signing secret %q, want a new one", got.SigningSecret)
			}
			again, err := db.DeliveryTarget(t.Context(), c.ID, recon.DeliveryIPN)
			if err != nil || again.SigningSecret != got.SigningSecret {
				t.Errorf("second read: %v, %v; want the same signing secret", again, err)
			}
		}
	})
}

// TestUpgradeWithAReaderKeepsTheKey: the move of a legacy key commits, then
// clearing its old copy from the write-ahead log fails because a reader
// holds an old snapshot (an old server still running, a sqlite3 shell). The
// key file is by then the only copy: it must stay, and the upgrade succeed.
// (It used to be removed, leaving every secret unreadable.)
func TestUpgradeWithAReaderKeepsTheKey(t *testing.T) {
	t.Parallel()
	databaseURL, _, s := legacyDatabase(t, sqlstore.EngineSQLite)
	reader, err := sql.Open("sqlite", sqlitePath(databaseURL))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	tx, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRow(`SELECT COUNT(*) FROM merchants`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "recon.key")
	db := openNoKey(t, databaseURL)
	if err := db.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
		t.Fatalf("upgrade with a reader: %v", err)
	}
	tx.Rollback()
	again := openNoKey(t, databaseURL)
	if err := again.UseSecretKey(t.Context(), sqlstore.KeySource{File: keyFile}); err != nil {
		t.Fatalf("restart after the upgrade: %v", err)
	}
	wantSecrets(t, again, s)
}
